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

struct Options {
    std::string prompt = "Once upon a time";
    bool prompt_given = false;  // interactive: send it at start
    int steps = 12;
    std::string screenshot;
    bool smoke = false;
    int width = 1440, height = 880;
    std::string show = "last";  // which step the screenshot's tree shows: last, best or rejection
    bool all_nodes = false;     // the tree panel draws every node, not the accepted view
    bool mask = false;          // the tree panel shows the attention mask beside the tree
    std::vector<std::string> recent_models;  // from the saved state
    bool measure = false;       // the screenshot also shows "measure speedup vs plain"
    std::string charts;         // a benchmark JSON to chart; opens the metrics panel's charts tab
    DecodeSettings settings;
    bool size_chosen = false;
    std::string accept;
    bool scripted() const { return smoke || !screenshot.empty(); }
};

// A flag the app cannot take: exit code 2, as the command line's usage errors.
struct FlagError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A whole number within [lo, hi], or an error naming the flag and what it got.
int whole_number(const std::string& flag, const std::string& v, int lo, int hi) {
    size_t used = 0;
    int n = 0;
    try {
        n = std::stoi(v, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != v.size() || v.empty() || n < lo || n > hi)
        throw FlagError(flag + " expects a whole number from " + std::to_string(lo) + " to " +
                                 std::to_string(hi) + ", got '" + v + "'");
    return n;
}

float real_number(const std::string& flag, const std::string& v, float lo, float hi) {
    const std::optional<float> x = parse_finite_float(v);
    if (!x || *x < lo || *x > hi)
        throw FlagError(flag + " expects a number from " + std::to_string(lo).substr(0, 4) + " to " +
                                 std::to_string(hi).substr(0, 4) + ", got '" + v + "'");
    return *x;
}

// `start`: the settings to begin from (the saved ones in interactive use); flags override them.
Options parse(int argc, char** argv, const Options& start) {
    Options o = start;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw FlagError(a + " needs a value");
            return argv[++i];
        };
        DecodeSettings& s = o.settings;
        if (a == "--prompt") o.prompt = value(), o.prompt_given = true;
        else if (a == "--steps") o.steps = whole_number(a, value(), 1, 100000);
        else if (a == "--screenshot") o.screenshot = value();
        else if (a == "--smoke") o.smoke = true;
        else if (a == "--size") {
            const std::string v = value();
            const size_t x = v.find('x');
            if (x == std::string::npos) throw FlagError("--size expects WIDTHxHEIGHT, got '" + v + "'");
            o.width = whole_number("--size", v.substr(0, x), 320, 8192);
            o.height = whole_number("--size", v.substr(x + 1), 240, 8192);
            o.size_chosen = true;
        } else if (a == "--show") o.show = value();
        else if (a == "--all-nodes") o.all_nodes = true;
        else if (a == "--mask") o.mask = true;
        else if (a == "--measure") o.measure = true;
        else if (a == "--charts") o.charts = value();
        else if (a == "--model" || a == "-m") s.model_path = value();
        else if (a == "--tokenizer") s.tokenizer_path = value();
        else if (a == "--heads") s.heads_path = value(), s.mode = DrafterKind::Medusa;
        else if (a == "--tree") s.tree = value(), s.mode = DrafterKind::Medusa;
        else if (a == "--plain") s.mode = DrafterKind::Plain;
        else if (a == "--auto") s.mode = DrafterKind::Auto;
        else if (a == "--fixed-shape") s.fixed_shape = true;
        else if (a == "--draft-model") s.draft_path = value(), s.mode = DrafterKind::DraftModel;
        else if (a == "--gamma") s.gamma = whole_number(a, value(), 1, 16), s.mode = DrafterKind::DraftModel;
        else if (a == "--adaptive-gamma") s.adaptive_gamma = true, s.mode = DrafterKind::DraftModel;
        else if (a == "--draft-tree") s.draft_branches = whole_number(a, value(), 1, 8), s.mode = DrafterKind::DraftModel;
        else if (a == "--ngram") s.ngram_tokens = whole_number(a, value(), 1, 127), s.mode = DrafterKind::Ngram;
        else if (a == "--eagle") s.eagle_path = value(), s.mode = DrafterKind::Eagle;
        else if (a == "--eagle-tree") s.eagle_tree = value(), s.mode = DrafterKind::Eagle;
        else if (a == "--accept") o.accept = value();
        else if (a == "--temp") s.temperature = real_number(a, value(), 0.0f, 10.0f);
        else if (a == "--top-k") s.top_k = whole_number(a, value(), 0, 1000000);
        else if (a == "--top-p") s.top_p = real_number(a, value(), 0.01f, 1.0f);
        else if (a == "--min-p") s.min_p = real_number(a, value(), 0.0f, 0.5f);
        else if (a == "--repeat-penalty") s.repeat_penalty = real_number(a, value(), 0.01f, 10.0f);
        else if (a == "--seed") s.seed = uint64_t(whole_number(a, value(), 0, 2147483647));
        else if (a == "--ctx-size" || a == "-c") s.ctx_size = whole_number("--ctx-size", value(), 1, 1 << 24);
        else if (a == "--help" || a == "-h") {
            std::puts("medusa-chat [-m|--model F] [--tokenizer F] [--heads F] [--tree SPEC] [--plain] [--accept RULE]\n"
                      "            [--draft-model F] [--gamma N] [--adaptive-gamma] [--draft-tree K] [--ngram N]\n"
                      "            [--eagle DIR [--eagle-tree dynamic|SPEC]] [--auto] [--fixed-shape]\n"
                      "            [--temp T] [--top-k K] [--top-p P] [--min-p P] [--repeat-penalty R] [--seed N] [--size WxH]\n"
                      "            [-c|--ctx-size N]\n"
                      "  --ctx-size     positions of the KV cache (default: the model's context, at most 4096;\n"
                      "      more than the model's context is allowed, with a warning)\n"
                      "  --draft-model, --gamma, --adaptive-gamma, --draft-tree select draft-model speculative decoding,\n"
                      "      --ngram n-gram lookup, --eagle EAGLE's draft layer, --heads/--tree Medusa;\n"
                      "      --accept greedy|typical|sample in every mode; --auto chooses among every drafter it has\n"
                      "      files for, step by step; --fixed-shape drafts the mode's own tree, gamma or n-gram length\n"
                      "      every step instead of the step controller's shape\n"
                      "  the settings of the last session come back from ${XDG_CONFIG_HOME:-~/.config}/medusa-vk/;\n"
                      "      flags override them\n"
                      "  without --heads/--tree, a model uses the heads and tuned tree scripts/train_default_heads.sh\n"
                      "      trained for it, when ${MEDUSA_CACHE:-~/.cache/medusa-vk} holds them (found by the model's\n"
                      "      content, whatever its path; the status line names them); --heads init: untrained heads\n"
                      "  --prompt TEXT  start decoding TEXT at once; Ctrl-C in the terminal closes the window, settings saved\n"
                      "  --prompt TEXT --steps N --screenshot FILE.png [--show last|best|rejection]   decode N steps, save the\n"
                      "                 window (rejection: the latest step with a rejected draft token)\n"
                      "  --all-nodes    the tree panel starts with every node drawn (zoom and scroll)\n"
                      "  --mask         the tree panel starts with the attention mask beside the tree\n"
                      "  --measure      before the screenshot, measure the speedup against plain decoding\n"
                      "  --charts BENCH.json   chart a `medusa bench --json` result in the metrics panel's charts tab\n"
                      "  --smoke        load, generate, stop, clear, generate again, quit; fails on validation messages\n"
                      "  (--screenshot and --smoke neither read nor write the saved settings, nor save chats)\n"
                      "Chats are saved after every reply in ${MEDUSA_CHATS:-${XDG_DATA_HOME:-~/.local/share}/medusa-vk/chats};\n"
                      "the Chats button reopens them.");
            std::exit(0);
        } else if (a == "--version") {
            std::printf("medusa-chat %s\n", MEDUSA_VERSION);
            std::exit(0);
        } else throw FlagError("unknown argument " + a + " (see --help)");
    }
    if (!o.accept.empty()) {
        try {
            o.settings.rule = parse_accept_rule(o.accept);
        } catch (const std::invalid_argument& e) {
            throw FlagError(std::string("--accept: ") + e.what());
        }
    }
    return o;
}

// Scripted runs (--screenshot, --smoke) start from the defaults; interactive ones from the saved state.
bool scripted_args(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        if (!std::strcmp(argv[i], "--screenshot") || !std::strcmp(argv[i], "--smoke")) return true;
    return false;
}

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
    if (app.reader.turns()[1].mode.rfind("draft (", 0) != 0) return fail("the draft turn is not named draft");
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
        Options o = parse(argc, argv, start);
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
