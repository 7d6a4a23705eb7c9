// What one device can hold: its largest device-local heap, the most bytes one storage-buffer
// binding may span (maxStorageBufferRange) and one allocation may take (maxMemoryAllocationSize).
// Everything that allocates checks against these first, so a model too big for the device is
// refused with the numbers instead of failing in the driver or binding past a limit.
#pragma once
#include <vulkan/vulkan.h>

#include <cstdint>
#include <string>

#include "gpu/vk_check.h"

namespace medusa::gpu {

struct DeviceLimits {
    uint64_t heap_bytes = 0;      // the largest device-local heap
    uint64_t storage_range = 0;   // maxStorageBufferRange
    uint64_t max_allocation = 0;  // maxMemoryAllocationSize (Vulkan 1.1 / maintenance3)
    uint64_t texel_elements = 0;  // maxTexelBufferElements: texels one buffer view may span
    // Invocations one workgroup of a 1-D dispatch may have (maxComputeWorkGroupSize[0], at most
    // maxComputeWorkGroupInvocations).
    uint32_t max_workgroup_size = 0;
    uint32_t shared_memory_bytes = 0;  // maxComputeSharedMemorySize: what one workgroup may share
};

DeviceLimits query_device_limits(VkPhysicalDevice physical);

// Lower limits than the device's, to try the checks on a small model (tests); 0 keeps the
// device's own. MEDUSA_HEAP_LIMIT and MEDUSA_BUFFER_RANGE_LIMIT (bytes) in the environment do the same.
struct DeviceLimitCaps {
    uint64_t heap_bytes = 0;
    uint64_t storage_range = 0;
};
DeviceLimits apply_caps(DeviceLimits limits, DeviceLimitCaps caps);
DeviceLimitCaps caps_from_environment();

// Something does not fit the device; the message says what and gives the numbers.
struct DeviceLimitError : VulkanError {
    using VulkanError::VulkanError;
};

// 3.91 GiB, 12.5 MiB, 512 MiB, 100 bytes: three significant digits.
std::string format_bytes(uint64_t bytes);

}  // namespace medusa::gpu
