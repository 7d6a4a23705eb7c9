// The Vulkan instance, the chosen device and its compute queue; counts validation messages.
#pragma once
#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "gpu/device_limits.h"
#include "gpu/vk_check.h"

namespace medusa::gpu {

// VkPhysicalDeviceType: CPU drivers (lavapipe) get their own shader layouts and defaults.
enum class DeviceKind { Discrete, Integrated, Virtual, Cpu, Other };
// "discrete", "integrated", "virtual", "cpu", "other": for `info`, bench JSON and messages.
const char* device_kind_name(DeviceKind kind);

struct DeviceInfo {
    uint32_t index = 0;
    std::string name;
    DeviceKind kind = DeviceKind::Other;
    std::string vendor;  // NVIDIA, AMD, Intel, Mesa (lavapipe) ...
    std::string driver;  // driver name and version string
    std::string api_version;
    uint64_t device_local_bytes = 0;
    uint32_t subgroup_size = 0;
    bool subgroup_arithmetic = false;  // and shuffles: both in compute shaders
    bool float16 = false;
    // 16 x 16 x 16 f16 matrix units in compute shaders (gpu/cooperative_matrix.h); switched on
    // at device creation where offered.
    bool cooperative_matrix = false;
};

// Every device the loader sees, in the order --device N refers to (none without a driver).
std::vector<DeviceInfo> list_devices();

// No Vulkan driver is installed, or none offers a device: the message says what to install and
// that --cpu runs without Vulkan.
struct NoVulkanDevice : VulkanError {
    NoVulkanDevice();
};

struct ContextOptions {
    int device = -1;          // -1: best (discrete > integrated > virtual > cpu)
    bool validation = false;  // also switched on by MEDUSA_VALIDATION=1 in the environment
    // For a window drawn with the same device (the desktop app); empty/unset for compute-only callers.
    std::vector<std::string> instance_extensions;  // e.g. what glfwGetRequiredInstanceExtensions lists
    std::vector<std::string> device_extensions;    // e.g. VK_KHR_swapchain
    // When set, the queue must do graphics + compute and this must accept its family (presentation
    // support); devices without such a family are skipped when choosing the best one.
    std::function<bool(VkInstance, VkPhysicalDevice, uint32_t family)> graphics_queue_filter;
    // CPU drivers (lavapipe): worker threads for shaders, 0 = run them on the submitting thread
    // (sets LP_NUM_THREADS before the driver starts, unless the environment already has it).
    // -1: the driver's default (a thread per core). Other drivers ignore it.
    int cpu_driver_threads = -1;
    // Lower heap and binding limits than the device's (tests of the checks); see DeviceLimitCaps.
    DeviceLimitCaps limit_caps;
};

class Context {
public:
    explicit Context(ContextOptions options = {});
    ~Context();
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

    VkDevice device() const { return device_; }
    VkPhysicalDevice physical_device() const { return physical_; }
    VkQueue queue() const { return queue_; }
    uint32_t queue_family() const { return queue_family_; }
    VkInstance instance() const { return instance_; }
    const DeviceInfo& info() const { return info_; }
    // The heap and binding limits every allocation is checked against (with any caps applied).
    const DeviceLimits& limits() const { return limits_; }
    bool validation_enabled() const { return validation_; }
    // Warnings and errors reported by the validation layer since start-up.
    int validation_messages() const { return validation_messages_.load(); }
    float timestamp_period_ns() const { return timestamp_period_; }
    bool timestamps_supported() const { return timestamps_; }
    uint32_t memory_type(uint32_t type_bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid = 0) const;
    VkMemoryPropertyFlags memory_flags(uint32_t type_index) const;

    // Vulkan wants submits to a queue (and device-wide waits) externally synchronised: everyone
    // who submits to queue() — decoding threads, the app's renderer — holds this lock meanwhile.
    std::unique_lock<std::mutex> lock_queue() { return std::unique_lock<std::mutex>(queue_mutex_); }
    VkResult wait_idle() {
        auto lock = lock_queue();
        return vkDeviceWaitIdle(device_);
    }

    // Bookkeeping for `bench`: bytes of GPU memory in use and the peak.
    void track_alloc(int64_t bytes);
    uint64_t peak_bytes() const { return peak_bytes_; }
    uint64_t live_bytes() const { return live_bytes_; }
    // Compute pipelines built so far (each costs tens of ms on a CPU driver, which compiles it).
    uint64_t pipelines_built() const { return pipelines_built_.load(); }
    void count_pipeline() { ++pipelines_built_; }

private:
    static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT,
                                                     VkDebugUtilsMessageTypeFlagsEXT,
                                                     const VkDebugUtilsMessengerCallbackDataEXT*, void*);
    VkInstance instance_ = VK_NULL_HANDLE;
    VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
    VkPhysicalDevice physical_ = VK_NULL_HANDLE;
    VkDevice device_ = VK_NULL_HANDLE;
    VkQueue queue_ = VK_NULL_HANDLE;
    uint32_t queue_family_ = 0;
    DeviceInfo info_;
    DeviceLimits limits_;
    VkPhysicalDeviceMemoryProperties memory_{};
    bool validation_ = false;
    bool timestamps_ = false;
    float timestamp_period_ = 1.0f;
    std::atomic<int> validation_messages_{0};
    std::mutex queue_mutex_;
    uint64_t live_bytes_ = 0;
    uint64_t peak_bytes_ = 0;
    std::atomic<uint64_t> pipelines_built_{0};
};

}  // namespace medusa::gpu
