// The memory bandwidth a device can reach, measured rather than taken from a data sheet, so a
// benchmark can say what fraction of it decoding streams: a device-to-device buffer copy on a
// GPU, a STREAM-like copy over host memory on every core for a CPU driver (whose "device
// memory" is the host's).
#pragma once
#include <string>

#include "gpu/context.h"

namespace medusa::gpu {

struct MeasuredBandwidth {
    double gb_s = 0;      // bytes read + bytes written per second, as STREAM's copy counts them
    std::string method;   // what was timed, for the report
    size_t bytes = 0;     // size of the copied buffer
};

// Best of `runs` copies of `bytes`: the host copy for a CPU driver, else the device copy.
MeasuredBandwidth measure_bandwidth(Context& ctx, size_t bytes = size_t(256) << 20, int runs = 5);
MeasuredBandwidth measure_host_copy(size_t bytes, int runs);
// Clamped to an eighth of device memory per buffer.
MeasuredBandwidth measure_device_copy(Context& ctx, size_t bytes, int runs);

}  // namespace medusa::gpu
