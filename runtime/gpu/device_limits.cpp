#include "gpu/device_limits.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace medusa::gpu {

namespace {

uint64_t cap(uint64_t value, uint64_t limit) { return limit ? std::min(value, limit) : value; }

uint64_t env_bytes(const char* name) {
    const char* v = std::getenv(name);
    if (!v || !*v) return 0;
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 10);
    if (*end) throw std::invalid_argument(std::string(name) + " must be a number of bytes, not '" + v + "'");
    return n;
}

}  // namespace

DeviceLimits query_device_limits(VkPhysicalDevice physical) {
    VkPhysicalDeviceMaintenance3Properties m3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
    VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    props.pNext = &m3;
    vkGetPhysicalDeviceProperties2(physical, &props);
    VkPhysicalDeviceMemoryProperties memory;
    vkGetPhysicalDeviceMemoryProperties(physical, &memory);
    DeviceLimits l;
    // Buffers live in one heap each: the largest device-local one bounds what a model may use.
    for (uint32_t i = 0; i < memory.memoryHeapCount; ++i)
        if (memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
            l.heap_bytes = std::max<uint64_t>(l.heap_bytes, memory.memoryHeaps[i].size);
    l.storage_range = props.properties.limits.maxStorageBufferRange;
    l.texel_elements = props.properties.limits.maxTexelBufferElements;
    l.max_workgroup_size = std::min(props.properties.limits.maxComputeWorkGroupSize[0],
                                    props.properties.limits.maxComputeWorkGroupInvocations);
    l.shared_memory_bytes = props.properties.limits.maxComputeSharedMemorySize;
    l.max_allocation = m3.maxMemoryAllocationSize ? m3.maxMemoryAllocationSize : UINT64_MAX;
    return l;
}

DeviceLimits apply_caps(DeviceLimits limits, DeviceLimitCaps caps) {
    limits.heap_bytes = cap(limits.heap_bytes, caps.heap_bytes);
    limits.storage_range = cap(limits.storage_range, caps.storage_range);
    return limits;
}

DeviceLimitCaps caps_from_environment() {
    return {env_bytes("MEDUSA_HEAP_LIMIT"), env_bytes("MEDUSA_BUFFER_RANGE_LIMIT")};
}

std::string format_bytes(uint64_t bytes) {
    static const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
    if (bytes < 1024) return std::to_string(bytes) + " bytes";
    double v = double(bytes) / 1024;
    int u = 0;
    while (v >= 1024 && u < 3) v /= 1024, ++u;
    char buf[32];
    std::snprintf(buf, sizeof buf, v < 10 ? "%.2f %s" : v < 100 ? "%.1f %s" : "%.0f %s", v, units[u]);
    return buf;
}

}  // namespace medusa::gpu
