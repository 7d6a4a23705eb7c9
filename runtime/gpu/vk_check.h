// Turns a failed Vulkan call into an exception that names the call and the result code.
#pragma once
#include <vulkan/vulkan.h>

#include <stdexcept>
#include <string>

namespace medusa::gpu {

struct VulkanError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

const char* vk_result_name(VkResult r);

inline void vk_check(VkResult r, const char* what) {
    if (r != VK_SUCCESS) throw VulkanError(std::string(what) + " failed: " + vk_result_name(r));
}

}  // namespace medusa::gpu
