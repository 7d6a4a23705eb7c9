// medusa-chat: the desktop app. Without flags it opens the window; --screenshot and --smoke run
// scripted sessions for the tests and the README and exit.
#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>
#include <imgui.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "chat_app.h"
#include "command_line.h"
#include "model/runtime_warning.h"
#include "interrupt.h"
#include "terminal_text.h"
#include "model/output_path.h"
#include "frame_loop.h"
#include "scripted_runs.h"
#include "settings_store.h"
#include "window_renderer.h"

using namespace medusa;
using namespace medusa::chat;

namespace {

void on_drop(GLFWwindow* w, int n, const char** paths) {
    auto* app = static_cast<ChatApp*>(glfwGetWindowUserPointer(w));
    for (int i = 0; i < n; ++i) app->drop(paths[i]);
}

// Where the last interactive session ended: its settings, window and tree view; the defaults
// when there is none or it cannot be read (said on stderr).
Options saved_start(const std::string& state_path) {
    Options start;
    if (state_path.empty()) return start;
    try {
        if (const auto st = load_state(state_path)) {
            start.settings = st->settings;
            start.width = st->window_width, start.height = st->window_height;
            start.all_nodes = st->tree_all;
            start.recent_models = st->recent_models;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "medusa-chat: ignoring the saved settings: %s\n", terminal_safe(e.what()).c_str());
    }
    return start;
}

void save_session(GLFWwindow* window, const ChatApp& app, const std::string& state_path) {
    if (state_path.empty()) return;
    SavedState st;
    st.settings = app.settings;
    glfwGetWindowSize(window, &st.window_width, &st.window_height);
    st.tree_all = app.tree_all, st.tree_fit = app.tree_fit, st.tree_zoom = app.tree_zoom;
    st.recent_models = app.recent_models;
    try {
        save_state(state_path, st);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "medusa-chat: the settings were not saved: %s\n", terminal_safe(e.what()).c_str());
    }
}

// The interactive window until it is closed or interrupted; returns the exit code.
int run_window(GLFWwindow* window, WindowRenderer& renderer, ChatApp& app, const Options& o,
               const std::string& state_path) {
    if (o.prompt_given) app.input = o.prompt, app.send(o.prompt);  // starts decoding at once
    int settle_frames = 3;
    FramePacer pacer;
    while (!glfwWindowShouldClose(window) && !interrupt_requested()) {
        // Redraw continuously while decoding (not while measuring the speedup: drawing would
        // compete with the measured decoding); otherwise sleep until input or the worker changes
        // something (half a second at most, for Ctrl-C in the terminal), then draw a few frames
        // for ImGui to settle.
        if (app.worker.busy() && !app.worker.measuring()) {
            pacer.wait(app);
        } else if (settle_frames > 0) {
            glfwPollEvents();
            --settle_frames;
        } else {
            const double before = glfwGetTime();
            glfwWaitEventsTimeout(0.5);
            if (glfwGetTime() - before < 0.45) settle_frames = 3;  // woken by an event
        }
        app.poll();
        int w, h;
        glfwGetWindowSize(window, &w, &h);
        renderer.new_frame();
        app.draw(float(w), float(h));
        renderer.render();
        pacer.drawn();
    }
    save_session(window, app, state_path);
    if (!interrupt_requested()) return 0;
    std::fprintf(stderr, "medusa-chat: interrupted; %s\n",
                 state_path.empty() ? "nothing saved" : ("settings saved in " + state_path).c_str());
    return kInterruptedExit;
}

// The runtime's warnings (a tuning entry or a cache file set aside) show in the status area too,
// not only on a terminal the user may not have.
struct WarningsShown {
    explicit WarningsShown(DecodeWorker& w) {
        set_warning_sink([&w](const std::string& text) {
            std::fprintf(stderr, "medusa-chat: warning: %s\n", terminal_safe(text).c_str());
            w.add_warning(text);
        });
    }
    ~WarningsShown() { set_warning_sink({}); }  // before the worker goes
};

}  // namespace

int main(int argc, char** argv) {
    // Ctrl-C in the terminal (even while loading) closes the window as its close button does: the
    // worker stops after its step and the settings are saved.
    const InterruptScope interrupt;
    try {
        // Interactive sessions start where the last one ended; scripted runs from the defaults.
        const std::string state_path = config_dir().empty() ? "" : config_dir() + "/settings.json";
        const Options start = scripted_args(argc, argv) ? Options{} : saved_start(state_path);
        Options o = parse_flags(argc, argv, start);
        if (!o.screenshot.empty()) {  // before the window and the decoding, not after them
            check_output_path(o.screenshot);
            check_output_path(o.screenshot + ".json");
        }
        GLFWwindow* window = create_window(o.width, o.height, "medusa-chat");
        int rc = 0;
        {
            gpu::ContextOptions context_options = window_context_options();
            // As the command line does: a model of a few MB decodes faster with a CPU driver's
            // shaders on the submitting thread than handed to its worker threads (the model the
            // app starts with decides; the driver reads it once).
            std::error_code size_error;
            const auto model_bytes = std::filesystem::file_size(o.settings.model_path, size_error);
            if (!size_error && model_bytes < (uintmax_t(16) << 20)) context_options.cpu_driver_threads = 0;
            gpu::Context ctx(context_options);
            const auto& info = ctx.info();
            const std::string title = "medusa-chat - " + info.name + " (" + info.vendor + ", " + info.driver + ")";
            glfwSetWindowTitle(window, title.c_str());
            WindowRenderer renderer(ctx, window, 15.0f);
            {
                ChatApp app(ctx);
                const WarningsShown warnings_shown(app.worker);
                app.settings = o.settings;
                app.keep_chats = !o.scripted();  // a screenshot or smoke run is not a conversation
                app.tree_all = o.all_nodes;
                app.tree_mask = o.mask;
                app.recent_models = o.recent_models;
                if (!o.charts.empty()) app.bench_path = o.charts, app.open_charts = true;
                app.worker.set_on_change([] { glfwPostEmptyEvent(); });  // wakes an idle window
                glfwSetWindowUserPointer(window, &app);
                glfwSetDropCallback(window, on_drop);
                if (o.smoke) rc = run_smoke(window, renderer, app);
                else if (!o.screenshot.empty()) rc = run_screenshot(window, renderer, app, o);
                else rc = run_window(window, renderer, app, o, state_path);
                app.stop();
            }  // the worker joins here, before the renderer and the device go
            if (ctx.validation_messages() > 0) {
                std::fprintf(stderr, "error: %d Vulkan validation message(s)\n", ctx.validation_messages());
                rc = rc ? rc : 3;
            }
        }
        glfwDestroyWindow(window);
        glfwTerminate();
        return rc;
    } catch (const FlagError& e) {
        std::fprintf(stderr, "medusa-chat: %s\n", terminal_safe(e.what()).c_str());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "medusa-chat: %s\n", terminal_safe(e.what()).c_str());
        return 1;
    }
}
