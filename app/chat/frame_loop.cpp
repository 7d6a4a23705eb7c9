#include "frame_loop.h"

#include <GLFW/glfw3.h>

#include <algorithm>
#include <chrono>

namespace medusa::chat {

void FramePacer::wait(const ChatApp& app) {
    glfwPollEvents();
    const double cost = frame_end - frame_start;
    const double gap = std::clamp(9 * cost, 1.0 / 30, 0.5);
    for (double now = glfwGetTime(); app.worker.busy() && now - frame_end < gap; now = glfwGetTime())
        glfwWaitEventsTimeout(gap - (now - frame_end));
    frame_start = glfwGetTime();
}

void FramePacer::drawn() { frame_end = glfwGetTime(); }

bool frames_until(GLFWwindow* window, WindowRenderer& r, ChatApp& app, const std::function<bool()>& done,
                  double seconds, Image* capture) {
    const auto t0 = std::chrono::steady_clock::now();
    FramePacer pacer;
    for (;;) {
        pacer.wait(app);
        app.poll();
        int w, h;
        glfwGetWindowSize(window, &w, &h);
        r.new_frame();
        app.draw(float(w), float(h));
        const bool ok = done();
        r.render(ok ? capture : nullptr);
        pacer.drawn();
        if (ok) return true;
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > seconds) return false;
        if (glfwWindowShouldClose(window)) return false;
    }
}


}  // namespace medusa::chat
