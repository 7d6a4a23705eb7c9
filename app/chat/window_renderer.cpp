#include "window_renderer.h"

#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_vulkan.h>

#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "chat_fonts.h"

namespace medusa::chat {

namespace {

void check(VkResult r, const char* what) {
    if (r != VK_SUCCESS) throw std::runtime_error(std::string(what) + " failed (VkResult " + std::to_string(r) + ")");
}
void check_imgui(VkResult r) { check(r, "ImGui Vulkan backend"); }

}  // namespace

GLFWwindow* create_window(int width, int height, const char* title) {
    glfwSetErrorCallback([](int code, const char* msg) { std::fprintf(stderr, "glfw error %d: %s\n", code, msg); });
    if (!glfwInit()) throw std::runtime_error("cannot open a window: no display (run under xvfb-run for tests)");
    if (!glfwVulkanSupported()) throw std::runtime_error("GLFW finds no Vulkan loader");
    glfwWindowHint(GLFW_CLIENT_API, GLFW_NO_API);
    GLFWwindow* w = glfwCreateWindow(width, height, title, nullptr, nullptr);
    if (!w) throw std::runtime_error("glfwCreateWindow failed");
    return w;
}

gpu::ContextOptions window_context_options() {
    gpu::ContextOptions o;
    uint32_t n = 0;
    const char** ext = glfwGetRequiredInstanceExtensions(&n);
    for (uint32_t i = 0; i < n; ++i) o.instance_extensions.push_back(ext[i]);
    o.device_extensions.push_back(VK_KHR_SWAPCHAIN_EXTENSION_NAME);
    o.graphics_queue_filter = [](VkInstance inst, VkPhysicalDevice pd, uint32_t family) {
        return glfwGetPhysicalDevicePresentationSupport(inst, pd, family) == GLFW_TRUE;
    };
    return o;
}

WindowRenderer::WindowRenderer(gpu::Context& ctx, GLFWwindow* window, float font_px) : ctx_(ctx), window_(window) {
    check(glfwCreateWindowSurface(ctx.instance(), window, nullptr, &surface_), "glfwCreateWindowSurface");
    VkBool32 ok = VK_FALSE;
    vkGetPhysicalDeviceSurfaceSupportKHR(ctx.physical_device(), ctx.queue_family(), surface_, &ok);
    if (!ok) throw std::runtime_error(ctx.info().name + " cannot present to this window");

    // ImGui needs one combined image sampler (the font); a few spare for nothing else.
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 16};
    VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pi.flags = VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT;
    pi.maxSets = 16;
    pi.poolSizeCount = 1;
    pi.pPoolSizes = &size;
    check(vkCreateDescriptorPool(ctx.device(), &pi, nullptr, &pool_), "vkCreateDescriptorPool");

    wd_ = new ImGui_ImplVulkanH_Window();
    wd_->Surface = surface_;
    const VkFormat formats[] = {VK_FORMAT_B8G8R8A8_UNORM, VK_FORMAT_R8G8B8A8_UNORM};
    wd_->SurfaceFormat = ImGui_ImplVulkanH_SelectSurfaceFormat(ctx.physical_device(), surface_, formats, 2,
                                                               VK_COLORSPACE_SRGB_NONLINEAR_KHR);
    VkPresentModeKHR modes[] = {VK_PRESENT_MODE_FIFO_KHR};
    wd_->PresentMode = ImGui_ImplVulkanH_SelectPresentMode(ctx.physical_device(), surface_, modes, 1);
    int w, h;
    glfwGetFramebufferSize(window, &w, &h);
    create_swapchain(w, h);

    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;  // the layout is fixed; settings_store.h keeps what is worth keeping
    ImGui::StyleColorsDark();
    ImGuiStyle& style = ImGui::GetStyle();
    style.WindowRounding = 4.0f;
    style.FrameRounding = 3.0f;
    // Slider handles thin and translucent, so that the value drawn under them stays readable.
    style.GrabMinSize = 5.0f;
    style.Colors[ImGuiCol_SliderGrab].w = 0.5f;
    style.Colors[ImGuiCol_SliderGrabActive].w = 0.75f;
    load_chat_fonts(font_px);
    ImGui_ImplGlfw_InitForVulkan(window, true);
    ImGui_ImplVulkan_InitInfo ii = {};
    ii.Instance = ctx.instance();
    ii.PhysicalDevice = ctx.physical_device();
    ii.Device = ctx.device();
    ii.QueueFamily = ctx.queue_family();
    ii.Queue = ctx.queue();
    ii.DescriptorPool = pool_;
    ii.MinImageCount = min_images_;
    ii.ImageCount = wd_->ImageCount;
    ii.MSAASamples = VK_SAMPLE_COUNT_1_BIT;
    ii.CheckVkResultFn = check_imgui;
    ImGui_ImplVulkan_Init(&ii, wd_->RenderPass);

    // Upload the font atlas once, with the first frame's command buffer.
    ImGui_ImplVulkanH_Frame& fd = wd_->Frames[0];
    check(vkResetCommandPool(ctx.device(), fd.CommandPool, 0), "vkResetCommandPool");
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(fd.CommandBuffer, &bi), "vkBeginCommandBuffer");
    ImGui_ImplVulkan_CreateFontsTexture(fd.CommandBuffer);
    check(vkEndCommandBuffer(fd.CommandBuffer), "vkEndCommandBuffer");
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &fd.CommandBuffer;
    {
        auto lock = ctx.lock_queue();
        check(vkQueueSubmit(ctx.queue(), 1, &si, VK_NULL_HANDLE), "vkQueueSubmit");
        check(vkDeviceWaitIdle(ctx.device()), "vkDeviceWaitIdle");
    }
    ImGui_ImplVulkan_DestroyFontUploadObjects();
}

WindowRenderer::~WindowRenderer() {
    ctx_.wait_idle();
    ImGui_ImplVulkan_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    ImGui_ImplVulkanH_DestroyWindow(ctx_.instance(), ctx_.device(), wd_, nullptr);  // also the surface
    delete wd_;
    vkDestroyDescriptorPool(ctx_.device(), pool_, nullptr);
}

void WindowRenderer::create_swapchain(int w, int h) {
    ImGui_ImplVulkanH_CreateOrResizeWindow(ctx_.instance(), ctx_.physical_device(), ctx_.device(), wd_,
                                           ctx_.queue_family(), nullptr, w, h, min_images_);
}

void WindowRenderer::new_frame() {
    if (rebuild_) {
        int w, h;
        glfwGetFramebufferSize(window_, &w, &h);
        if (w > 0 && h > 0) {
            ImGui_ImplVulkan_SetMinImageCount(min_images_);
            create_swapchain(w, h);
            wd_->FrameIndex = 0;
            rebuild_ = false;
        }
    }
    ImGui_ImplVulkan_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
}

void WindowRenderer::render(Image* capture) {
    ImGui::Render();
    ImDrawData* data = ImGui::GetDrawData();
    if (capture) render_offscreen(data, *capture);
    if (rebuild_ || data->DisplaySize.x <= 0 || data->DisplaySize.y <= 0) return;
    VkDevice dev = ctx_.device();
    VkSemaphore acquired = wd_->FrameSemaphores[wd_->SemaphoreIndex].ImageAcquiredSemaphore;
    VkSemaphore done = wd_->FrameSemaphores[wd_->SemaphoreIndex].RenderCompleteSemaphore;
    VkResult r = vkAcquireNextImageKHR(dev, wd_->Swapchain, UINT64_MAX, acquired, VK_NULL_HANDLE, &wd_->FrameIndex);
    if (r == VK_ERROR_OUT_OF_DATE_KHR || r == VK_SUBOPTIMAL_KHR) {
        rebuild_ = true;
        if (r == VK_ERROR_OUT_OF_DATE_KHR) return;
    } else {
        check(r, "vkAcquireNextImageKHR");
    }
    ImGui_ImplVulkanH_Frame& fd = wd_->Frames[wd_->FrameIndex];
    check(vkWaitForFences(dev, 1, &fd.Fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    check(vkResetFences(dev, 1, &fd.Fence), "vkResetFences");
    check(vkResetCommandPool(dev, fd.CommandPool, 0), "vkResetCommandPool");
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(fd.CommandBuffer, &bi), "vkBeginCommandBuffer");
    VkRenderPassBeginInfo rp{VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
    rp.renderPass = wd_->RenderPass;
    rp.framebuffer = fd.Framebuffer;
    rp.renderArea.extent = {uint32_t(wd_->Width), uint32_t(wd_->Height)};
    VkClearValue clear{};
    clear.color = {{0.08f, 0.08f, 0.10f, 1.0f}};
    rp.clearValueCount = 1;
    rp.pClearValues = &clear;
    vkCmdBeginRenderPass(fd.CommandBuffer, &rp, VK_SUBPASS_CONTENTS_INLINE);
    ImGui_ImplVulkan_RenderDrawData(data, fd.CommandBuffer);
    vkCmdEndRenderPass(fd.CommandBuffer);
    check(vkEndCommandBuffer(fd.CommandBuffer), "vkEndCommandBuffer");
    VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.waitSemaphoreCount = 1;
    si.pWaitSemaphores = &acquired;
    si.pWaitDstStageMask = &wait_stage;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &fd.CommandBuffer;
    si.signalSemaphoreCount = 1;
    si.pSignalSemaphores = &done;
    {
        auto lock = ctx_.lock_queue();
        check(vkQueueSubmit(ctx_.queue(), 1, &si, fd.Fence), "vkQueueSubmit");
    }

    VkPresentInfoKHR pi{VK_STRUCTURE_TYPE_PRESENT_INFO_KHR};
    pi.waitSemaphoreCount = 1;
    pi.pWaitSemaphores = &done;
    pi.swapchainCount = 1;
    pi.pSwapchains = &wd_->Swapchain;
    pi.pImageIndices = &wd_->FrameIndex;
    {
        auto lock = ctx_.lock_queue();
        r = vkQueuePresentKHR(ctx_.queue(), &pi);
    }
    if (r == VK_ERROR_OUT_OF_DATE_KHR || r == VK_SUBOPTIMAL_KHR) rebuild_ = true;
    else check(r, "vkQueuePresentKHR");
    wd_->SemaphoreIndex = (wd_->SemaphoreIndex + 1) % wd_->ImageCount;
}

}  // namespace medusa::chat
