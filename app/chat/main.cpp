// medusa-chat: the desktop app. Without flags it opens the window; --screenshot and --smoke run
// scripted sessions for the tests and the README and exit.
#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>
#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>

#include "chat_app.h"
#include "command_line.h"
#include "model/runtime_warning.h"
#include "interrupt.h"
#include "number_text.h"
#include "terminal_text.h"
#include "model/output_path.h"
#include "png_file.h"
#include "settings_store.h"
#include "step_explain.h"
#include "window_renderer.h"

using namespace medusa;
using namespace medusa::chat;

namespace {

void on_drop(GLFWwindow* w, int n, const char** paths) {
    auto* app = static_cast<ChatApp*>(glfwGetWindowUserPointer(w));
    for (int i = 0; i < n; ++i) app->drop(paths[i]);
}

// While the worker decodes, frames wait their turn: a frame's drawing and the decoding steps share
// the device's one queue, so each frame drawn holds the next step up. Drawing may take a tenth of
// the time: at a CPU driver's 25-60 ms a frame that is 2 to 4 frames a second (at full rate the app
// decoded 50 tokens/s where the command line did 4,000), on a GPU 30. Input is handled as it comes.
struct FramePacer {
    double frame_start = 0, frame_end = 0;
    void wait(const ChatApp& app) {
        glfwPollEvents();
        const double cost = frame_end - frame_start;
        const double gap = std::clamp(9 * cost, 1.0 / 30, 0.5);
        for (double now = glfwGetTime(); app.worker.busy() && now - frame_end < gap; now = glfwGetTime())
            glfwWaitEventsTimeout(gap - (now - frame_end));
        frame_start = glfwGetTime();
    }
    void drawn() { frame_end = glfwGetTime(); }
};

// Runs frames until `done` holds (or the time runs out); returns whether it held.
bool frames_until(GLFWwindow* window, WindowRenderer& r, ChatApp& app, const std::function<bool()>& done,
                  double seconds, Image* capture = nullptr) {
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

int run_smoke(GLFWwindow* window, WindowRenderer& r, ChatApp& app) {
    auto idle = [&] { return !app.worker.busy(); };
    auto fail = [&](const char* what) {
        std::fprintf(stderr, "smoke: %s (worker error: %s)\n", what, app.worker.last_error().c_str());
        return 1;
    };
    app.settings.fixed_shape = true;  // every step drafts: the checks below look at the drafts
    app.load();
    if (!frames_until(window, r, app, idle, 120) || !app.worker.last_error().empty()) return fail("load failed");
    app.worker.set_delay_ms(20);  // slow enough that Stop lands mid-generation
    if (!app.send("Once upon a time")) return fail("send refused");
    if (!frames_until(window, r, app, [&] { return app.reader.steps().size() >= 3; }, 120)) return fail("no steps");
    app.stop();
    if (!frames_until(window, r, app, [&] { return idle() && !app.reader.turns().empty() && app.reader.turns()[0].done; }, 60))
        return fail("stop did not end the turn");
    if (app.reader.turns()[0].stop_reason != StopReason::Cancelled) return fail("turn was not cancelled");
    app.clear();
    frames_until(window, r, app, [] { return true; }, 1);
    if (!app.reader.steps().empty() || !app.reader.turns().empty()) return fail("clear left steps behind");
    app.worker.set_delay_ms(0);
    app.settings.max_new_tokens = 24;
    if (!app.send("The little dog")) return fail("second send refused");
    if (!frames_until(window, r, app, [&] { return idle() && !app.reader.turns().empty() && app.reader.turns()[0].done; }, 120))
        return fail("second generation did not finish");
    if (app.reader.steps().empty() || !app.worker.last_error().empty()) return fail("second generation produced nothing");
    const size_t medusa_steps = app.reader.steps().size();
    // The speedup measurement: both runs on the worker, nothing added to the chat.
    if (!app.measure_speedup()) return fail("speedup measurement refused");
    if (!frames_until(window, r, app, [&] { return idle(); }, 120)) return fail("speedup measurement did not finish");
    const SpeedupResult sp = app.worker.speedup();
    if (!sp.valid || sp.tokens_per_s <= 0 || sp.plain_tokens_per_s <= 0 || sp.plain_tokens < sp.tokens - 8)
        return fail("speedup measurement gave no result");
    if (app.reader.steps().size() != medusa_steps || app.reader.turns().size() != 1)
        return fail("the speedup measurement leaked into the chat");
    // Draft-model mode: switch, generate once, and check the steps are draft chains.
    app.settings.mode = DrafterKind::DraftModel;
    app.settings.gamma = 4;
    if (!app.send("The little dog")) return fail("draft send refused");
    if (!frames_until(window, r, app, [&] { return idle() && app.reader.turns().size() == 2 && app.reader.turns()[1].done; }, 120))
        return fail("draft generation did not finish");
    if (!app.worker.last_error().empty()) return fail("draft generation failed");
    if (app.reader.turns()[1].drafter != DrafterKind::DraftModel) return fail("the draft turn is not a draft-model turn");
    size_t chains = 0;
    for (size_t i = medusa_steps; i < app.reader.steps().size(); ++i) {
        const StepRecord& s = app.reader.steps()[i];
        if (s.source != StepSource::Draft) return fail("a draft-mode step is not marked as a draft step");
        if (s.trace.nodes.size() > 1) ++chains;
    }
    if (chains == 0) return fail("draft mode produced no drafted chains");
    std::printf("smoke: ok, %zu Medusa steps, %zu draft steps; %s %.0f tok/s vs plain %.0f tok/s; %d validation "
                "messages\n",
                medusa_steps, app.reader.steps().size() - medusa_steps, sp.mode.c_str(), sp.tokens_per_s,
                sp.plain_tokens_per_s, app.ctx.validation_messages());
    return 0;
}

int run_screenshot(GLFWwindow* window, WindowRenderer& r, ChatApp& app, const Options& o) {
    // The pointer on the title bar: where the X server left it (the screen's middle) a tooltip would show.
    glfwSetCursorPos(window, 1, 1);
    app.settings.max_steps = o.steps;
    app.input = o.prompt;
    if (!app.send(o.prompt)) throw std::runtime_error("could not start generating");
    int settle = 0;  // ImGui sizes some things from the previous frame: draw a few after the last step
    const bool ok = frames_until(window, r, app, [&] {
        // Settings that failed to load start no turn: say so now, not when the wait runs out.
        if (!app.worker.busy() && !app.worker.last_error().empty()) return true;
        if (app.worker.busy() || app.reader.turns().empty() || !app.reader.turns()[0].done) return false;
        if (o.show == "rejection" && settle == 0) {
            // The latest step that rejected a drafted token (or a Medusa step that accepted some guesses and
            // turned down the next):
            // the picture with the most to explain.
            for (int i = int(app.reader.steps().size()) - 1; i >= 0 && app.selected_step < 0; --i) {
                const StepRecord& s = app.reader.steps()[i];
                bool guess_rejected = false;  // Medusa: a guess under the last accepted node was turned down
                for (const auto& n : s.trace.nodes)
                    guess_rejected = guess_rejected || (!s.trace.path.empty() && n.parent == s.trace.path.back());
                if (s.trace.nodes.size() > 1 && (s.source == StepSource::Draft ? rejected_node(s.trace) > 0
                                                                       : s.trace.accepted > 0 && guess_rejected))
                    app.selected_step = i;
            }
        }
        if (o.show == "best" && settle == 0) {
            int best = -1;
            for (size_t i = 0; i < app.reader.steps().size(); ++i)
                if (best < 0 || app.reader.steps()[i].trace.accepted > app.reader.steps()[best].trace.accepted) best = int(i);
            app.selected_step = best;
        }
        return ++settle > 3;
    }, 300);
    if (!ok) throw std::runtime_error("decoding did not finish in time: " + app.worker.last_error());
    if (!app.worker.last_error().empty()) throw std::runtime_error(app.worker.last_error());
    if (o.measure) {
        app.worker.set_delay_ms(0);
        if (!app.measure_speedup()) throw std::runtime_error("could not start the speedup measurement");
        int frames = 0;
        // Few frames while it runs: drawing competes with decoding for the (CPU) device.
        auto done = [&] {
            if (app.worker.busy()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
            return !app.worker.busy() && ++frames > 3;
        };
        if (!frames_until(window, r, app, done, 300))
            throw std::runtime_error("the speedup measurement did not finish in time");
        const SpeedupResult sp = app.worker.speedup();
        if (!sp.valid) throw std::runtime_error("the speedup measurement gave no result");
        std::printf("%s: %.0f tok/s vs plain %.0f tok/s = %.2fx\n", sp.mode.c_str(), sp.tokens_per_s,
                    sp.plain_tokens_per_s, sp.speedup());
    }
    Image image;
    frames_until(window, r, app, [] { return true; }, 1, &image);
    write_png(o.screenshot, image);
    write_layout_json(o.screenshot + ".json", image, app);
    std::printf("wrote %s (%dx%d, %zu steps)\n", o.screenshot.c_str(), image.width, image.height,
                app.reader.steps().size());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    // Ctrl-C in the terminal (even while loading) closes the window as its close button does: the
    // worker stops after its step and the settings are saved.
    const InterruptScope interrupt;
    try {
        // Interactive sessions start where the last one ended; scripted runs from the defaults.
        Options start;
        const bool scripted = scripted_args(argc, argv);
        const std::string state_path = config_dir().empty() ? "" : config_dir() + "/settings.json";
        if (!scripted && !state_path.empty()) {
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
        }
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
                // The runtime's warnings (a tuning entry or a cache file set aside) show in the
                // status area too, not only on a terminal the user may not have.
                struct WarningsShown {
                    explicit WarningsShown(DecodeWorker& w) {
                        set_warning_sink([&w](const std::string& text) {
                            std::fprintf(stderr, "medusa-chat: warning: %s\n", terminal_safe(text).c_str());
                            w.add_warning(text);
                        });
                    }
                    ~WarningsShown() { set_warning_sink({}); }  // before the worker goes
                } warnings_shown(app.worker);
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
                else {
                    if (o.prompt_given) app.input = o.prompt, app.send(o.prompt);  // starts decoding at once
                    int settle_frames = 3;
                    FramePacer pacer;
                    while (!glfwWindowShouldClose(window) && !interrupt_requested()) {
                        // Redraw continuously while decoding (not while measuring the speedup: drawing
                        // would compete with the measured decoding); otherwise sleep until input or the
                        // worker changes something (half a second at most, for Ctrl-C in the terminal),
                        // then draw a few frames for ImGui to settle.
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
                    if (!state_path.empty()) {
                        SavedState st;
                        st.settings = app.settings;
                        glfwGetWindowSize(window, &st.window_width, &st.window_height);
                        st.tree_all = app.tree_all, st.tree_fit = app.tree_fit, st.tree_zoom = app.tree_zoom;
                        st.recent_models = app.recent_models;
                        try {
                            save_state(state_path, st);
                        } catch (const std::exception& e) {
                            std::fprintf(stderr, "medusa-chat: the settings were not saved: %s\n",
                                         terminal_safe(e.what()).c_str());
                        }
                    }
                    if (interrupt_requested()) {
                        std::fprintf(stderr, "medusa-chat: interrupted; %s\n",
                                     state_path.empty() ? "nothing saved" : ("settings saved in " + state_path).c_str());
                        rc = kInterruptedExit;
                    }
                }
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
