#include "gpu/context.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gpu/cooperative_matrix.h"
#include "gpu/vk_check.h"

namespace medusa::gpu {

namespace {

const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

bool env_flag(const char* name) {
    const char* v = std::getenv(name);
    return v && *v && std::strcmp(v, "0") != 0;
}

bool layer_available(const char* name) {
    uint32_t n = 0;
    vkEnumerateInstanceLayerProperties(&n, nullptr);
    std::vector<VkLayerProperties> layers(n);
    vkEnumerateInstanceLayerProperties(&n, layers.data());
    for (const auto& l : layers)
        if (std::strcmp(l.layerName, name) == 0) return true;
    return false;
}

bool extension_available(const char* name) {
    uint32_t n = 0;
    vkEnumerateInstanceExtensionProperties(nullptr, &n, nullptr);
    std::vector<VkExtensionProperties> exts(n);
    vkEnumerateInstanceExtensionProperties(nullptr, &n, exts.data());
    for (const auto& e : exts)
        if (std::strcmp(e.extensionName, name) == 0) return true;
    return false;
}

VkInstance create_instance(bool validation, bool debug_utils, const std::vector<std::string>& extra = {}) {
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "medusa";
    app.apiVersion = VK_API_VERSION_1_2;
    std::vector<const char*> layers, extensions;
    if (validation) layers.push_back(kValidationLayer);
    if (debug_utils) extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    for (const auto& e : extra) extensions.push_back(e.c_str());
    // Validation checks the barriers too: CommandSequence leaves out those no data needs, and a
    // missing one is a race that a CPU driver, running dispatches one by one, would never show.
    // MEDUSA_SYNC_VALIDATION=0 leaves that part out: the layer's record of accesses grows with the
    // steps of a long run, which a test of the program's own memory must not count.
    const char* sync_env = std::getenv("MEDUSA_SYNC_VALIDATION");
    const bool sync_validation = validation && !(sync_env && std::strcmp(sync_env, "0") == 0);
    const VkValidationFeatureEnableEXT sync = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
    VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
    features.enabledValidationFeatureCount = 1;
    features.pEnabledValidationFeatures = &sync;
    if (sync_validation) extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
    VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    if (sync_validation) ci.pNext = &features;
    ci.pApplicationInfo = &app;
    ci.enabledLayerCount = uint32_t(layers.size());
    ci.ppEnabledLayerNames = layers.data();
    ci.enabledExtensionCount = uint32_t(extensions.size());
    ci.ppEnabledExtensionNames = extensions.data();
    VkInstance instance = VK_NULL_HANDLE;
    const VkResult r = vkCreateInstance(&ci, nullptr, &instance);
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER) throw NoVulkanDevice();  // the loader found no driver
    vk_check(r, "vkCreateInstance");
    return instance;
}

std::string vendor_name(uint32_t id, const std::string& device_name) {
    switch (id) {
        case 0x10DE: return "NVIDIA";
        case 0x1002: return "AMD";
        case 0x8086: return "Intel";
        case 0x13B5: return "ARM";
        case 0x5143: return "Qualcomm";
        case 0x10005: return "Mesa";
        default: break;
    }
    if (device_name.find("llvmpipe") != std::string::npos) return "Mesa";
    char buf[32];
    std::snprintf(buf, sizeof buf, "vendor 0x%04x", id);
    return buf;
}

DeviceKind device_kind(VkPhysicalDeviceType t) {
    switch (t) {
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return DeviceKind::Discrete;
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return DeviceKind::Integrated;
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return DeviceKind::Virtual;
        case VK_PHYSICAL_DEVICE_TYPE_CPU: return DeviceKind::Cpu;
        default: return DeviceKind::Other;
    }
}

int type_rank(VkPhysicalDeviceType t) {
    switch (t) {
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 4;
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 3;
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
        case VK_PHYSICAL_DEVICE_TYPE_CPU: return 1;
        default: return 0;
    }
}

DeviceInfo describe(VkInstance instance, VkPhysicalDevice pd, uint32_t index) {
    VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceVulkan12Properties v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES};
    subgroup.pNext = &v12;
    VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    props.pNext = &subgroup;
    vkGetPhysicalDeviceProperties2(pd, &props);
    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceFeatures2 feats{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    feats.pNext = &f12;
    vkGetPhysicalDeviceFeatures2(pd, &feats);
    VkPhysicalDeviceMemoryProperties mem;
    vkGetPhysicalDeviceMemoryProperties(pd, &mem);

    DeviceInfo d;
    d.index = index;
    d.name = props.properties.deviceName;
    d.kind = device_kind(props.properties.deviceType);
    d.vendor = vendor_name(props.properties.vendorID, d.name);
    d.driver = std::string(v12.driverName) + " " + v12.driverInfo;
    uint32_t v = props.properties.apiVersion;
    d.api_version = std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
                    std::to_string(VK_API_VERSION_PATCH(v));
    for (uint32_t i = 0; i < mem.memoryHeapCount; ++i)
        if (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) d.device_local_bytes += mem.memoryHeaps[i].size;
    d.subgroup_size = subgroup.subgroupSize;
    // What the kernels use: reductions (arithmetic) and register permutes (shuffle).
    const VkSubgroupFeatureFlags needed = VK_SUBGROUP_FEATURE_ARITHMETIC_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_BIT;
    d.subgroup_arithmetic = (subgroup.supportedOperations & needed) == needed &&
                            (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT);
    d.float16 = f12.shaderFloat16;
    d.cooperative_matrix = offers_cooperative_matrix(instance, pd, d.subgroup_size);
    return d;
}

// The first family that computes (and, with a filter, also draws and is accepted by it); -1 if none.
int pick_queue_family(VkInstance instance, VkPhysicalDevice pd, const ContextOptions& o) {
    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, nullptr);
    std::vector<VkQueueFamilyProperties> families(nq);
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, families.data());
    for (uint32_t i = 0; i < nq; ++i) {
        if (!(families[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
        if (o.graphics_queue_filter &&
            (!(families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) || !o.graphics_queue_filter(instance, pd, i)))
            continue;
        return int(i);
    }
    return -1;
}

std::vector<VkPhysicalDevice> physical_devices(VkInstance instance) {
    uint32_t n = 0;
    vk_check(vkEnumeratePhysicalDevices(instance, &n, nullptr), "vkEnumeratePhysicalDevices");
    std::vector<VkPhysicalDevice> pds(n);
    vk_check(vkEnumeratePhysicalDevices(instance, &n, pds.data()), "vkEnumeratePhysicalDevices");
    return pds;
}

}  // namespace

const char* device_kind_name(DeviceKind kind) {
    switch (kind) {
        case DeviceKind::Discrete: return "discrete";
        case DeviceKind::Integrated: return "integrated";
        case DeviceKind::Virtual: return "virtual";
        case DeviceKind::Cpu: return "cpu";
        case DeviceKind::Other: break;
    }
    return "other";
}

NoVulkanDevice::NoVulkanDevice()
    : VulkanError("no Vulkan driver or device found: install your GPU's Vulkan driver, or mesa-vulkan-drivers for "
                  "the CPU driver (lavapipe); --cpu runs the C++ reference without Vulkan") {}

std::vector<DeviceInfo> list_devices() {
    VkInstance instance = VK_NULL_HANDLE;
    try {
        instance = create_instance(false, false);
    } catch (const NoVulkanDevice&) {
        return {};
    }
    std::vector<DeviceInfo> out;
    auto pds = physical_devices(instance);
    for (uint32_t i = 0; i < pds.size(); ++i) out.push_back(describe(instance, pds[i], i));
    vkDestroyInstance(instance, nullptr);
    return out;
}

VKAPI_ATTR VkBool32 VKAPI_CALL Context::on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                   VkDebugUtilsMessageTypeFlagsEXT,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
    auto* self = static_cast<Context*>(user);
    if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
        self->validation_messages_++;
        std::fprintf(stderr, "[vulkan validation] %s\n", data->pMessage);
    }
    return VK_FALSE;
}

namespace {

// Warnings and errors of the validation layer, to `callback` with `self`.
VkDebugUtilsMessengerEXT create_messenger(VkInstance instance, PFN_vkDebugUtilsMessengerCallbackEXT callback, void* self) {
    VkDebugUtilsMessengerCreateInfoEXT mi{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    mi.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    mi.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    mi.pfnUserCallback = callback;
    mi.pUserData = self;
    VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
    if (create) vk_check(create(instance, &mi, nullptr, &messenger), "vkCreateDebugUtilsMessengerEXT");
    return messenger;
}

// --device N, or the best kind of device (discrete first) that has the queue the options ask for.
int choose_device(VkInstance instance, const std::vector<VkPhysicalDevice>& pds, const ContextOptions& options) {
    if (pds.empty()) throw NoVulkanDevice();
    int chosen = options.device;
    if (chosen >= int(pds.size()))
        throw VulkanError("--device " + std::to_string(chosen) + " does not exist: " + std::to_string(pds.size()) +
                          " device(s) found (see `medusa info`)");
    if (chosen >= 0) return chosen;
    int best_rank = -1;
    for (size_t i = 0; i < pds.size(); ++i) {
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(pds[i], &p);
        if (options.graphics_queue_filter && pick_queue_family(instance, pds[i], options) < 0) continue;
        if (type_rank(p.deviceType) > best_rank) best_rank = type_rank(p.deviceType), chosen = int(i);
    }
    if (chosen < 0) throw VulkanError("no Vulkan device can both compute and present to the window");
    return chosen;
}

struct QueueChoice {
    uint32_t family = 0;
    bool timestamps = false;  // its commands can be timed
    float timestamp_period = 1.0f;
};

QueueChoice choose_queue(VkInstance instance, VkPhysicalDevice physical, const ContextOptions& options,
                         const std::string& name) {
    const int family = pick_queue_family(instance, physical, options);
    if (family < 0)
        throw VulkanError(name + (options.graphics_queue_filter ? " has no queue that computes, draws and presents"
                                                                : " has no compute queue"));
    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &nq, nullptr);
    std::vector<VkQueueFamilyProperties> families(nq);
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &nq, families.data());
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(physical, &props);
    return {uint32_t(family), families[family].timestampValidBits > 0 && props.limits.timestampComputeAndGraphics,
            props.limits.timestampPeriod};
}

VkDevice create_device(VkPhysicalDevice physical, uint32_t queue_family, const ContextOptions& options,
                       const DeviceInfo& info) {
    float priority = 1.0f;
    VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qci.queueFamilyIndex = queue_family;
    qci.queueCount = 1;
    qci.pQueuePriorities = &priority;
    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.pNext = &f12;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    std::vector<const char*> device_extensions;
    for (const auto& e : options.device_extensions) device_extensions.push_back(e.c_str());
    // f16 arithmetic where offered: the matrix units' kernel, and its emulation on other devices.
    f12.shaderFloat16 = info.float16;
    CooperativeMatrixEnable matrix_units;
    if (info.cooperative_matrix) matrix_units.apply(f12, device_extensions);
    dci.enabledExtensionCount = uint32_t(device_extensions.size());
    dci.ppEnabledExtensionNames = device_extensions.data();
    VkDevice device = VK_NULL_HANDLE;
    vk_check(vkCreateDevice(physical, &dci, nullptr, &device), "vkCreateDevice");
    return device;
}

}  // namespace

Context::Context(ContextOptions options) {
    if (options.cpu_driver_threads >= 0)
        setenv("LP_NUM_THREADS", std::to_string(options.cpu_driver_threads).c_str(), /*overwrite=*/0);
    validation_ = options.validation || env_flag("MEDUSA_VALIDATION");
    if (validation_ && !layer_available(kValidationLayer))
        throw VulkanError("validation was requested but the Khronos validation layer is not installed "
                          "(Debian: apt-get install vulkan-validationlayers)");
    bool debug_utils = validation_ && extension_available(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    instance_ = create_instance(validation_, debug_utils, options.instance_extensions);
    if (debug_utils) messenger_ = create_messenger(instance_, &Context::on_message, this);

    const auto pds = physical_devices(instance_);
    const int chosen = choose_device(instance_, pds, options);
    physical_ = pds[chosen];
    info_ = describe(instance_, physical_, uint32_t(chosen));
    if (!info_.subgroup_arithmetic)
        throw VulkanError(info_.name + " lacks subgroup arithmetic or shuffles in compute shaders, which the kernels need");
    vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);
    DeviceLimitCaps caps = caps_from_environment();
    if (options.limit_caps.heap_bytes) caps.heap_bytes = options.limit_caps.heap_bytes;
    if (options.limit_caps.storage_range) caps.storage_range = options.limit_caps.storage_range;
    limits_ = apply_caps(query_device_limits(physical_), caps);

    const QueueChoice queue = choose_queue(instance_, physical_, options, info_.name);
    queue_family_ = queue.family;
    timestamps_ = queue.timestamps;
    timestamp_period_ = queue.timestamp_period;
    device_ = create_device(physical_, queue_family_, options, info_);
    vkGetDeviceQueue(device_, queue_family_, 0, &queue_);
}

Context::~Context() {
    if (device_) vkDestroyDevice(device_, nullptr);
    if (messenger_) {
        auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
            vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
        if (destroy) destroy(instance_, messenger_, nullptr);
    }
    if (instance_) vkDestroyInstance(instance_, nullptr);
}

uint32_t Context::memory_type(uint32_t type_bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid) const {
    for (uint32_t i = 0; i < memory_.memoryTypeCount; ++i) {
        VkMemoryPropertyFlags f = memory_.memoryTypes[i].propertyFlags;
        if ((type_bits & (1u << i)) && (f & want) == want && !(f & avoid)) return i;
    }
    return UINT32_MAX;
}

VkMemoryPropertyFlags Context::memory_flags(uint32_t type_index) const {
    return memory_.memoryTypes[type_index].propertyFlags;
}

void Context::track_alloc(int64_t bytes) {
    live_bytes_ = uint64_t(int64_t(live_bytes_) + bytes);
    if (live_bytes_ > peak_bytes_) peak_bytes_ = live_bytes_;
}

const char* vk_result_name(VkResult r) {
    switch (r) {
        case VK_SUCCESS: return "VK_SUCCESS";
        case VK_NOT_READY: return "VK_NOT_READY";
        case VK_TIMEOUT: return "VK_TIMEOUT";
        case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
        case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
        case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
        case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
        case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
        case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
        case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
        case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
        case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
        case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
        default: return "VkResult error";
    }
}

}  // namespace medusa::gpu
