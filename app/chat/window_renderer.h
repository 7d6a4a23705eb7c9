// The GLFW window and its swapchain on the model's own Vulkan device, Dear ImGui's GLFW and
// Vulkan backends, and an offscreen copy of a frame for --screenshot.
#pragma once
#include <vulkan/vulkan.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/context.h"

struct GLFWwindow;
struct ImDrawData;
struct ImGui_ImplVulkanH_Window;

namespace medusa::chat {

// glfwInit, then a window without a GL context. Throws when there is no display.
GLFWwindow* create_window(int width, int height, const char* title);
// The instance extensions GLFW needs, VK_KHR_swapchain, and a queue that can present to a window.
gpu::ContextOptions window_context_options();

struct Image {
    int width = 0, height = 0;
    std::vector<uint8_t> rgba;
};

class WindowRenderer {
public:
    WindowRenderer(gpu::Context& ctx, GLFWwindow* window, float font_px);
    ~WindowRenderer();
    WindowRenderer(const WindowRenderer&) = delete;
    WindowRenderer& operator=(const WindowRenderer&) = delete;

    void new_frame();  // resizes the swapchain when needed, starts an ImGui frame
    // Renders ImGui's frame to the window; with `capture`, also into an offscreen image read back to it.
    void render(Image* capture = nullptr);

private:
    struct Offscreen;
    void create_swapchain(int w, int h);
    void render_offscreen(ImDrawData* data, Image& out);

    gpu::Context& ctx_;
    GLFWwindow* window_;
    VkSurfaceKHR surface_ = VK_NULL_HANDLE;
    VkDescriptorPool pool_ = VK_NULL_HANDLE;
    ImGui_ImplVulkanH_Window* wd_ = nullptr;
    bool rebuild_ = false;
    uint32_t min_images_ = 2;
};

}  // namespace medusa::chat
