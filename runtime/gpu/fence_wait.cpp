#include "gpu/fence_wait.h"

namespace medusa::gpu {

VkResult wait_for_fence(VkDevice device, VkFence fence, std::chrono::microseconds spin) {
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + spin;
    for (;;) {
        const VkResult r = vkGetFenceStatus(device, fence);
        if (r != VK_NOT_READY) return r;
        if (Clock::now() >= deadline) break;
    }
    return vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX);
}

}  // namespace medusa::gpu
