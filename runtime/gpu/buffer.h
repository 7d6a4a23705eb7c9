// A storage buffer with its own memory: device-local for weights and activations,
// host-visible for what the CPU writes or reads every step.
#pragma once
#include <vulkan/vulkan.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

namespace medusa::gpu {

class Context;

enum class MemoryKind { Device, Host };

// How a shader may read a buffer as a uniform texel buffer ((u)samplerBuffer + texelFetch): CPU
// drivers turn a texel fetch into one vector gather, where a storage-buffer load with per-lane
// addresses is a loop over the lanes (lavapipe: 2.5x the bytes per second, see shaders/weights.glsl).
enum class TexelFormat { U32, U32x2, U32x4, F32, F32x4 };
constexpr size_t kTexelFormats = 5;
VkFormat vk_format(TexelFormat f);
uint32_t texel_bytes(TexelFormat f);

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
    // In the device's own memory (a discrete GPU's VRAM, or all memory on UMA and CPU drivers):
    // what the device reads without crossing a bus.
    bool device_local() const { return device_local_; }
    // The whole buffer as texels of `f`, made on first use and kept while the buffer lives; null
    // when it holds more texels than one view may span (maxTexelBufferElements).
    VkBufferView texel_view(TexelFormat f) const;

private:
    Context& ctx_;
    VkBuffer buffer_ = VK_NULL_HANDLE;
    VkDeviceMemory memory_ = VK_NULL_HANDLE;
    size_t size_ = 0;
    size_t alloc_size_ = 0;
    void* mapped_ = nullptr;
    bool device_local_ = false;
    mutable std::mutex views_mutex_;
    mutable std::array<VkBufferView, kTexelFormats> views_{};
    mutable std::array<bool, kTexelFormats> view_tried_{};
};

// `floats` zeroed floats (at least one: Vulkan has no empty buffers): training state and scratch.
std::unique_ptr<Buffer> zeroed_floats(Context& ctx, size_t floats, MemoryKind kind = MemoryKind::Device);

}  // namespace medusa::gpu
