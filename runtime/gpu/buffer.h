// A storage buffer with its own memory: device-local for weights and activations,
// host-visible for what the CPU writes or reads every step.
#pragma once
#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>

namespace medusa::gpu {

class Context;

enum class MemoryKind { Device, Host };

class Buffer {
public:
    Buffer(Context& ctx, size_t bytes, MemoryKind kind);
    ~Buffer();
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;

    // Copies bytes in or out; goes through a staging buffer when the memory is not mappable.
    void upload(const void* src, size_t bytes, size_t offset = 0);
    void download(void* dst, size_t bytes, size_t offset = 0) const;
    void fill_zero();

    VkBuffer handle() const { return buffer_; }
    size_t size() const { return size_; }
    void* mapped() const { return mapped_; }  // null unless the memory is host-visible

private:
    Context& ctx_;
    VkBuffer buffer_ = VK_NULL_HANDLE;
    VkDeviceMemory memory_ = VK_NULL_HANDLE;
    size_t size_ = 0;
    size_t alloc_size_ = 0;
    void* mapped_ = nullptr;
};

}  // namespace medusa::gpu
