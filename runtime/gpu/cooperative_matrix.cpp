#include "gpu/cooperative_matrix.h"

#include <cstdlib>
#include <cstring>
#include <string>

namespace medusa::gpu {

namespace {

bool device_extension(VkPhysicalDevice pd, const char* name) {
    uint32_t n = 0;
    vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
    std::vector<VkExtensionProperties> exts(n);
    vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, exts.data());
    for (const auto& e : exts)
        if (std::strcmp(e.extensionName, name) == 0) return true;
    return false;
}

bool switched_off() {
    const char* v = std::getenv("MEDUSA_COOPERATIVE_MATRIX");
    return v && std::string(v) == "off";
}

}  // namespace

bool offers_cooperative_matrix(VkInstance instance, VkPhysicalDevice pd, uint32_t subgroup_size) {
    if (switched_off() || subgroup_size != kCooperativeMatrixSubgroup ||
        !device_extension(pd, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME))
        return false;
    VkPhysicalDeviceCooperativeMatrixFeaturesNV cm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    f12.pNext = &cm;
    VkPhysicalDeviceFeatures2 feats{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    feats.pNext = &f12;
    vkGetPhysicalDeviceFeatures2(pd, &feats);
    if (!cm.cooperativeMatrix || !f12.shaderFloat16 || !f12.vulkanMemoryModel) return false;
    VkPhysicalDeviceCooperativeMatrixPropertiesNV stages{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_NV};
    VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    props.pNext = &stages;
    vkGetPhysicalDeviceProperties2(pd, &props);
    if (!(stages.cooperativeMatrixSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT)) return false;
    auto list = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV>(
        vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV"));
    if (!list) return false;
    uint32_t n = 0;
    if (list(pd, &n, nullptr) != VK_SUCCESS) return false;
    std::vector<VkCooperativeMatrixPropertiesNV> shapes(n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
    if (list(pd, &n, shapes.data()) != VK_SUCCESS) return false;
    for (const auto& s : shapes)
        if (s.MSize == kCooperativeMatrixSize && s.NSize == kCooperativeMatrixSize && s.KSize == kCooperativeMatrixSize &&
            s.AType == VK_COMPONENT_TYPE_FLOAT16_NV && s.BType == VK_COMPONENT_TYPE_FLOAT16_NV &&
            s.CType == VK_COMPONENT_TYPE_FLOAT32_NV && s.DType == VK_COMPONENT_TYPE_FLOAT32_NV &&
            s.scope == VK_SCOPE_SUBGROUP_NV)
            return true;
    return false;
}

void CooperativeMatrixEnable::apply(VkPhysicalDeviceVulkan12Features& f12, std::vector<const char*>& extensions) {
    features.cooperativeMatrix = VK_TRUE;
    features.pNext = f12.pNext;
    f12.pNext = &features;
    f12.shaderFloat16 = VK_TRUE;
    f12.vulkanMemoryModel = VK_TRUE;
    extensions.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
}

}  // namespace medusa::gpu
