// Waiting for a submit: poll the fence for a short while before sleeping on it.
#pragma once
#include <vulkan/vulkan.h>

#include <chrono>

namespace medusa::gpu {

// A blocking wait wakes the thread only after the driver's signal reaches the scheduler: on
// lavapipe in a VM that took 0.13-0.2 ms of an empty submit's round trip (0.03 ms polling), a
// third of a stories260K token. Steps that short are polled; longer ones sleep after the budget.
constexpr std::chrono::microseconds kFenceSpinBudget{2000};

// Waits until `fence` is signalled: polls it for up to `spin`, then blocks. Returns the result of
// the last Vulkan call (VK_SUCCESS, or the error that ended the wait).
VkResult wait_for_fence(VkDevice device, VkFence fence, std::chrono::microseconds spin = kFenceSpinBudget);

}  // namespace medusa::gpu
