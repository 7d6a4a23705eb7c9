#include "gpu/buffer.h"

#include <algorithm>

#include <cstring>
#include <memory>

#include "gpu/context.h"
#include "gpu/one_shot.h"
#include "gpu/vk_check.h"

namespace medusa::gpu {

namespace {

// Before the driver is asked: past these it fails with a bare VK_ERROR_OUT_OF_DEVICE_MEMORY, or
// (lavapipe) hands out more than its heap and fails later.
void check_fits(const Context& ctx, size_t bytes) {
    const DeviceLimits& l = ctx.limits();
    if (bytes > l.max_allocation)
        throw DeviceLimitError("a buffer of " + format_bytes(bytes) + " exceeds " + ctx.info().name +
                               "'s maxMemoryAllocationSize of " + format_bytes(l.max_allocation));
    if (ctx.live_bytes() + bytes > l.heap_bytes)
        throw DeviceLimitError("a buffer of " + format_bytes(bytes) + " beside the " + format_bytes(ctx.live_bytes()) +
                               " in use exceeds " + ctx.info().name + "'s heap of " + format_bytes(l.heap_bytes));
}

}  // namespace

VkFormat vk_format(TexelFormat f) {
    switch (f) {
        case TexelFormat::U32: return VK_FORMAT_R32_UINT;
        case TexelFormat::U32x2: return VK_FORMAT_R32G32_UINT;
        case TexelFormat::U32x4: return VK_FORMAT_R32G32B32A32_UINT;
        case TexelFormat::F32: return VK_FORMAT_R32_SFLOAT;
        case TexelFormat::F32x4: return VK_FORMAT_R32G32B32A32_SFLOAT;
    }
    return VK_FORMAT_UNDEFINED;
}

uint32_t texel_bytes(TexelFormat f) {
    return f == TexelFormat::U32x2 ? 8 : f == TexelFormat::U32x4 || f == TexelFormat::F32x4 ? 16 : 4;
}

Buffer::Buffer(Context& ctx, size_t bytes, MemoryKind kind) : ctx_(ctx), size_(bytes) {
    check_fits(ctx, bytes);
    VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = bytes ? bytes : 4;
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT |
               VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    vk_check(vkCreateBuffer(ctx.device(), &bi, nullptr, &buffer_), "vkCreateBuffer");
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(ctx.device(), buffer_, &req);

    uint32_t type = UINT32_MAX;
    if (kind == MemoryKind::Device) {
        // Prefer memory that is both device-local and mappable (UMA, ReBAR, lavapipe): no staging copies.
        type = ctx.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT |
                                                       VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                       VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
        if (type == UINT32_MAX) type = ctx.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    } else {
        type = ctx.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                       VK_MEMORY_PROPERTY_HOST_COHERENT_BIT |
                                                       VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
        if (type == UINT32_MAX)
            type = ctx.memory_type(req.memoryTypeBits,
                                   VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    }
    if (type == UINT32_MAX) type = ctx.memory_type(req.memoryTypeBits, 0);
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = type;
    VkResult r = vkAllocateMemory(ctx.device(), &ai, nullptr, &memory_);
    if (r != VK_SUCCESS) {
        vkDestroyBuffer(ctx.device(), buffer_, nullptr);
        throw VulkanError("allocating " + std::to_string(bytes) + " bytes of GPU memory failed: " + vk_result_name(r));
    }
    vk_check(vkBindBufferMemory(ctx.device(), buffer_, memory_, 0), "vkBindBufferMemory");
    alloc_size_ = req.size;
    ctx.track_alloc(int64_t(alloc_size_));
    device_local_ = (ctx.memory_flags(type) & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) != 0;
    constexpr VkMemoryPropertyFlags mappable = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    if ((ctx.memory_flags(type) & mappable) == mappable)
        vk_check(vkMapMemory(ctx.device(), memory_, 0, VK_WHOLE_SIZE, 0, &mapped_), "vkMapMemory");
}

Buffer::~Buffer() {
    for (VkBufferView v : views_)
        if (v) vkDestroyBufferView(ctx_.device(), v, nullptr);
    if (mapped_) vkUnmapMemory(ctx_.device(), memory_);
    vkDestroyBuffer(ctx_.device(), buffer_, nullptr);
    vkFreeMemory(ctx_.device(), memory_, nullptr);
    ctx_.track_alloc(-int64_t(alloc_size_));
}

VkBufferView Buffer::texel_view(TexelFormat f) const {
    std::lock_guard<std::mutex> lock(views_mutex_);
    const size_t i = size_t(f);
    if (view_tried_[i]) return views_[i];
    view_tried_[i] = true;
    const uint64_t texels = size_ / texel_bytes(f);
    if (texels == 0 || texels > ctx_.limits().texel_elements) return VK_NULL_HANDLE;
    VkBufferViewCreateInfo vi{VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO};
    vi.buffer = buffer_;
    vi.format = vk_format(f);
    vi.offset = 0;
    vi.range = texels * texel_bytes(f);
    vk_check(vkCreateBufferView(ctx_.device(), &vi, nullptr, &views_[i]), "vkCreateBufferView");
    return views_[i];
}

void Buffer::upload(const void* src, size_t bytes, size_t offset) {
    if (offset + bytes > size_) throw VulkanError("buffer upload out of range");
    if (bytes == 0) return;
    if (mapped_) {
        std::memcpy(static_cast<char*>(mapped_) + offset, src, bytes);
        return;
    }
    Buffer staging(ctx_, bytes, MemoryKind::Host);
    std::memcpy(staging.mapped(), src, bytes);
    run_one_shot(ctx_, [&](VkCommandBuffer cb) {
        VkBufferCopy c{0, offset, bytes};
        vkCmdCopyBuffer(cb, staging.handle(), buffer_, 1, &c);
    });
}

void Buffer::download(void* dst, size_t bytes, size_t offset) const {
    if (offset + bytes > size_) throw VulkanError("buffer download out of range");
    if (bytes == 0) return;
    if (mapped_) {
        std::memcpy(dst, static_cast<const char*>(mapped_) + offset, bytes);
        return;
    }
    Buffer staging(ctx_, bytes, MemoryKind::Host);
    run_one_shot(ctx_, [&](VkCommandBuffer cb) {
        VkBufferCopy c{offset, 0, bytes};
        vkCmdCopyBuffer(cb, buffer_, staging.handle(), 1, &c);
    });
    std::memcpy(dst, staging.mapped(), bytes);
}

void Buffer::fill_zero() {
    if (mapped_) {
        std::memset(mapped_, 0, size_);
        return;
    }
    run_one_shot(ctx_, [&](VkCommandBuffer cb) { vkCmdFillBuffer(cb, buffer_, 0, VK_WHOLE_SIZE, 0); });
}

std::unique_ptr<Buffer> zeroed_floats(Context& ctx, size_t floats, MemoryKind kind) {
    auto b = std::make_unique<Buffer>(ctx, std::max<size_t>(floats, 1) * 4, kind);
    b->fill_zero();
    return b;
}

}  // namespace medusa::gpu
