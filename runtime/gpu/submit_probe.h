// What one queue submit costs on this device with nothing in it (record once, submit, wait for
// the fence): the price a drafter pays for each extra round trip between the GPU and the host.
#pragma once
#include "gpu/context.h"

namespace medusa::gpu {

// Median milliseconds of `runs` submit + wait of an empty command buffer.
double measure_submit_ms(Context& ctx, int runs = 200);

}  // namespace medusa::gpu
