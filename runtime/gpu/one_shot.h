// Records, submits and waits for a single short command buffer (uploads, readbacks).
#pragma once
#include <vulkan/vulkan.h>

#include <functional>

namespace medusa::gpu {
class Context;
void run_one_shot(Context& ctx, const std::function<void(VkCommandBuffer)>& record);
}  // namespace medusa::gpu
