#include "scripted_runs.h"

#include <GLFW/glfw3.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "frame_loop.h"
#include "png_file.h"
#include "step_explain.h"

namespace medusa::chat {

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
    app.settings.draft.gamma = 4;
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

}  // namespace medusa::chat
