// What one queue submit costs on this device with nothing in it (record once, submit, wait for
// the fence): the price a drafter pays for each extra round trip between the GPU and the host.
#pragma once
#include <chrono>

#include "gpu/context.h"
#include "gpu/fence_wait.h"

namespace medusa::gpu {

// Median milliseconds of `runs` submit + wait of an empty command buffer, the fence polled for up
// to `spin` first (0: a blocking wait from the start).
double measure_submit_ms(Context& ctx, int runs = 200, std::chrono::microseconds spin = kFenceSpinBudget);

}  // namespace medusa::gpu
