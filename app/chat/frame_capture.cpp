// WindowRenderer::render_offscreen: the same ImGui draw data rendered into an image we can copy
// back (swapchain images made by ImGui's helper cannot be a transfer source), for --screenshot.
#include <imgui.h>
#include <backends/imgui_impl_vulkan.h>

#include <cstring>
#include <stdexcept>

#include "window_renderer.h"

namespace medusa::chat {

namespace {

void check(VkResult r, const char* what) {
    if (r != VK_SUCCESS) throw std::runtime_error(std::string(what) + " failed (VkResult " + std::to_string(r) + ")");
}

VkDeviceMemory allocate(gpu::Context& ctx, VkMemoryRequirements req, VkMemoryPropertyFlags want) {
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = ctx.memory_type(req.memoryTypeBits, want);
    if (ai.memoryTypeIndex == UINT32_MAX) throw std::runtime_error("no memory type for the screenshot");
    VkDeviceMemory m;
    check(vkAllocateMemory(ctx.device(), &ai, nullptr, &m), "vkAllocateMemory");
    return m;
}

// A render pass of one colour attachment left as an attachment (a barrier makes it a copy source).
VkRenderPass create_pass(VkDevice dev, VkFormat format) {
    VkAttachmentDescription att{};
    att.format = format;
    att.samples = VK_SAMPLE_COUNT_1_BIT;
    att.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
    att.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
    att.stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
    att.stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
    att.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    att.finalLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;  // a barrier below makes it a copy source
    VkAttachmentReference ref{0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
    VkSubpassDescription sub{};
    sub.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
    sub.colorAttachmentCount = 1;
    sub.pColorAttachments = &ref;
    // Exactly ImGui's own dependency: the validation layer holds compatible passes to identical ones.
    VkSubpassDependency dep{};
    dep.srcSubpass = VK_SUBPASS_EXTERNAL;
    dep.dstSubpass = 0;
    dep.srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    dep.dstStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    dep.srcAccessMask = 0;
    dep.dstAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    VkRenderPassCreateInfo rpi{VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO};
    rpi.attachmentCount = 1;
    rpi.pAttachments = &att;
    rpi.subpassCount = 1;
    rpi.pSubpasses = &sub;
    rpi.dependencyCount = 1;
    rpi.pDependencies = &dep;
    VkRenderPass pass;
    check(vkCreateRenderPass(dev, &rpi, nullptr, &pass), "vkCreateRenderPass");
    return pass;
}

// What one offscreen frame is drawn into and read back from.
struct OffscreenFrame {
    int w = 0, h = 0;
    VkFormat format = VK_FORMAT_UNDEFINED;
    VkRenderPass pass = VK_NULL_HANDLE;
    VkImage image = VK_NULL_HANDLE;
    VkDeviceMemory image_mem = VK_NULL_HANDLE;
    VkImageView view = VK_NULL_HANDLE;
    VkFramebuffer fb = VK_NULL_HANDLE;
    VkBuffer buffer = VK_NULL_HANDLE;  // the pixels copied back, host-visible
    VkDeviceMemory buffer_mem = VK_NULL_HANDLE;
};

// The image the pass draws into, its view and framebuffer.
void create_image(gpu::Context& ctx, OffscreenFrame& o) {
    VkDevice dev = ctx.device();
    VkImageCreateInfo ii{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    ii.imageType = VK_IMAGE_TYPE_2D;
    ii.format = o.format;
    ii.extent = {uint32_t(o.w), uint32_t(o.h), 1};
    ii.mipLevels = 1;
    ii.arrayLayers = 1;
    ii.samples = VK_SAMPLE_COUNT_1_BIT;
    ii.tiling = VK_IMAGE_TILING_OPTIMAL;
    ii.usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
    check(vkCreateImage(dev, &ii, nullptr, &o.image), "vkCreateImage");
    VkMemoryRequirements req;
    vkGetImageMemoryRequirements(dev, o.image, &req);
    o.image_mem = allocate(ctx, req, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    check(vkBindImageMemory(dev, o.image, o.image_mem, 0), "vkBindImageMemory");
    VkImageViewCreateInfo vi{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    vi.image = o.image;
    vi.viewType = VK_IMAGE_VIEW_TYPE_2D;
    vi.format = o.format;
    vi.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    check(vkCreateImageView(dev, &vi, nullptr, &o.view), "vkCreateImageView");
    VkFramebufferCreateInfo fi{VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
    fi.renderPass = o.pass;
    fi.attachmentCount = 1;
    fi.pAttachments = &o.view;
    fi.width = uint32_t(o.w);
    fi.height = uint32_t(o.h);
    fi.layers = 1;
    check(vkCreateFramebuffer(dev, &fi, nullptr, &o.fb), "vkCreateFramebuffer");
}

// The host-visible buffer the pixels are copied into.
void create_readback(gpu::Context& ctx, OffscreenFrame& o) {
    VkDevice dev = ctx.device();
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = VkDeviceSize(o.w) * o.h * 4;
    bci.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    check(vkCreateBuffer(dev, &bci, nullptr, &o.buffer), "vkCreateBuffer");
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev, o.buffer, &req);
    o.buffer_mem = allocate(ctx, req, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    check(vkBindBufferMemory(dev, o.buffer, o.buffer_mem, 0), "vkBindBufferMemory");
}

// ImGui's draw data in the pass, then the image copied into the buffer for the host to read.
void record_frame(VkCommandBuffer cb, ImDrawData* data, const OffscreenFrame& o) {
    VkRenderPassBeginInfo rp{VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
    rp.renderPass = o.pass;
    rp.framebuffer = o.fb;
    rp.renderArea.extent = {uint32_t(o.w), uint32_t(o.h)};
    VkClearValue clear{};
    clear.color = {{0.08f, 0.08f, 0.10f, 1.0f}};
    rp.clearValueCount = 1;
    rp.pClearValues = &clear;
    vkCmdBeginRenderPass(cb, &rp, VK_SUBPASS_CONTENTS_INLINE);
    ImGui_ImplVulkan_RenderDrawData(data, cb);
    vkCmdEndRenderPass(cb);
    VkImageMemoryBarrier ib{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
    ib.srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    ib.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    ib.oldLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
    ib.newLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    ib.srcQueueFamilyIndex = ib.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    ib.image = o.image;
    ib.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0,
                         nullptr, 0, nullptr, 1, &ib);
    VkBufferImageCopy region{};
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = {uint32_t(o.w), uint32_t(o.h), 1};
    vkCmdCopyImageToBuffer(cb, o.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, o.buffer, 1, &region);
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0,
                         nullptr);
}

// Records the frame in a one-time command buffer and runs it to the end; returns the pool to destroy.
VkCommandPool draw_and_copy(gpu::Context& ctx, ImDrawData* data, const OffscreenFrame& o) {
    VkDevice dev = ctx.device();
    VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pci.queueFamilyIndex = ctx.queue_family();
    VkCommandPool cmd_pool;
    check(vkCreateCommandPool(dev, &pci, nullptr, &cmd_pool), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = cmd_pool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    VkCommandBuffer cb;
    check(vkAllocateCommandBuffers(dev, &cai, &cb), "vkAllocateCommandBuffers");
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
    record_frame(cb, data, o);
    check(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    {
        auto lock = ctx.lock_queue();
        check(vkQueueSubmit(ctx.queue(), 1, &si, VK_NULL_HANDLE), "vkQueueSubmit");
        check(vkDeviceWaitIdle(dev), "vkDeviceWaitIdle");
    }
    return cmd_pool;
}

// The copied pixels as opaque RGBA.
void read_pixels(VkDevice dev, const OffscreenFrame& o, Image& out) {
    out.width = o.w;
    out.height = o.h;
    out.rgba.resize(size_t(o.w) * o.h * 4);
    void* mapped = nullptr;
    check(vkMapMemory(dev, o.buffer_mem, 0, VK_WHOLE_SIZE, 0, &mapped), "vkMapMemory");
    std::memcpy(out.rgba.data(), mapped, out.rgba.size());
    vkUnmapMemory(dev, o.buffer_mem);
    const bool bgra = o.format == VK_FORMAT_B8G8R8A8_UNORM || o.format == VK_FORMAT_B8G8R8A8_SRGB;
    for (size_t i = 0; i < out.rgba.size(); i += 4) {
        if (bgra) std::swap(out.rgba[i], out.rgba[i + 2]);
        out.rgba[i + 3] = 255;  // the window is opaque
    }
}

void destroy(VkDevice dev, const OffscreenFrame& o) {
    vkDestroyBuffer(dev, o.buffer, nullptr);
    vkFreeMemory(dev, o.buffer_mem, nullptr);
    vkDestroyFramebuffer(dev, o.fb, nullptr);
    vkDestroyImageView(dev, o.view, nullptr);
    vkDestroyImage(dev, o.image, nullptr);
    vkFreeMemory(dev, o.image_mem, nullptr);
    vkDestroyRenderPass(dev, o.pass, nullptr);
}

}  // namespace

void WindowRenderer::render_offscreen(ImDrawData* data, Image& out) {
    VkDevice dev = ctx_.device();
    OffscreenFrame o;
    o.w = int(data->DisplaySize.x * data->FramebufferScale.x);
    o.h = int(data->DisplaySize.y * data->FramebufferScale.y);
    o.format = wd_->SurfaceFormat.format;  // same as the window: ImGui's pipeline fits both passes
    check(ctx_.wait_idle(), "vkDeviceWaitIdle");  // ImGui reuses its vertex buffers; none may be in flight
    o.pass = create_pass(dev, o.format);
    create_image(ctx_, o);
    create_readback(ctx_, o);
    const VkCommandPool cmd_pool = draw_and_copy(ctx_, data, o);
    read_pixels(dev, o, out);
    vkDestroyCommandPool(dev, cmd_pool, nullptr);
    destroy(dev, o);
}

}  // namespace medusa::chat
