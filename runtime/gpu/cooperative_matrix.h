// The device's matrix units, through VK_NV_cooperative_matrix: whether it multiplies 16 x 16 x 16
// f16 matrices into f32 on subgroups of 32 in compute shaders (the one shape
// shaders/matmul_coopmat.comp is written for), and what creating the device with them takes.
// (VK_KHR_cooperative_matrix, which AMD and Intel offer, needs a newer shader compiler than
// Debian 12's glslang 12.)
#pragma once
#include <vulkan/vulkan.h>

#include <vector>

namespace medusa::gpu {

inline constexpr uint32_t kCooperativeMatrixSize = 16;      // M = N = K
inline constexpr uint32_t kCooperativeMatrixSubgroup = 32;  // invocations per subgroup it assumes

// Whether `pd` offers the extension, its feature, f16 arithmetic and the Vulkan memory model (which
// shaders using it declare), on subgroups of 32, with the 16 x 16 x 16 f16 x f16 + f32 shape.
// MEDUSA_COOPERATIVE_MATRIX=off answers no, so that one machine can time both paths.
bool offers_cooperative_matrix(VkInstance instance, VkPhysicalDevice pd, uint32_t subgroup_size);

// The extension name and feature structs that vkCreateDevice takes to switch them on.
struct CooperativeMatrixEnable {
    VkPhysicalDeviceCooperativeMatrixFeaturesNV features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
    // Chains `features` after `f12` (the device's Vulkan 1.2 features, already in its pNext list),
    // sets the 1.2 features the shaders need there and adds the extension to `extensions`.
    void apply(VkPhysicalDeviceVulkan12Features& f12, std::vector<const char*>& extensions);
};

}  // namespace medusa::gpu
