#include "decoding_setup.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>

#include "context_size.h"
#include "setup/trained_files.h"
#include "llm/cpu_tree_runner.h"
#include "llm/gpu_tree_runner.h"
#include "session.h"
#include "terminal_text.h"

namespace medusa::cli {

Engine open_engine(const Args& args, const ModelFile& file, GpuModelOptions options) {
    Engine e;
    e.context = options.context > 0 ? options.context : file.config.seq_len;
    if (args.has("--cpu")) {
        e.cpu_model = std::make_unique<CpuReferenceModel>(file, e.context);
        e.runner = std::make_unique<CpuTreeRunner>(*e.cpu_model);
    } else {
        e.own_gpu = open_gpu(args, &file);
        e.gpu = e.own_gpu.get();
        e.gpu_model = std::make_unique<GpuModel>(*e.gpu, file, options);
        e.runner = std::make_unique<GpuTreeRunner>(*e.gpu_model, options.timestamps ? StageTiming::EveryRun : StageTiming::Off);
    }
    return e;
}

std::unique_ptr<TreeRunner> gpu_runner(GpuModel& model, bool timestamps) {
    return std::make_unique<GpuTreeRunner>(model, timestamps ? StageTiming::EveryRun : StageTiming::Off);
}

Engine borrowed_engine(GpuModel& model) {
    Engine e;
    e.gpu = &model.context();
    e.context = model.config().seq_len;
    e.runner = gpu_runner(model);
    return e;
}

namespace {

// A spec's or a loader's refusal, as the usage error it is on the command line.
template <class F>
auto as_usage_error(F&& f) {
    try {
        return f();
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
}

// A first-use measurement's progress on stderr: rewritten in place on a terminal, else its first
// line only (logs keep one line saying why the run paused).
std::function<void(const std::string&)> measuring_progress() {
    const bool tty = isatty(fileno(stderr));
    auto first = std::make_shared<bool>(true);
    return [tty, first](const std::string& line) {
        if (tty) std::fprintf(stderr, "\r\033[K%s", terminal_safe(line).c_str());
        else if (*first) std::fprintf(stderr, "%s (once for this device and model)\n", terminal_safe(line).c_str());
        *first = false;
    };
}

SamplingParams sampling_params(const Args& args, float default_temperature) {
    SamplingParams s;
    s.temperature = args.number("--temp", default_temperature);
    s.top_p = args.number("--top-p", 0.95f);
    s.top_k = args.integer("--top-k", 0);
    s.min_p = args.number("--min-p", 0.0f);
    s.repeat_penalty = args.number("--repeat-penalty", 1.0f);
    s.repeat_last_n = args.integer("--repeat-last-n", 64);
    s.seed = args.has("--seed") ? uint64_t(args.integer("--seed", 0))
                                : uint64_t(std::chrono::system_clock::now().time_since_epoch().count());
    return s;
}

}  // namespace

MedusaSpec medusa_spec(const Args& args) {
    MedusaSpec m;
    m.heads = parse_heads_word(args.str("--heads", heads_word(std::nullopt)));
    m.num_heads = args.integer("--num-heads", 0);
    if (args.has("--num-heads") && m.num_heads < 1) throw UsageError("--num-heads must be >= 1");
    m.tree = args.str("--tree", m.tree);
    return m;
}

DraftModelSpec draft_model_spec(const Args& args, const std::string& model) {
    DraftModelSpec d;
    d.model = model;
    d.gamma = args.integer("--gamma", d.gamma);
    d.adaptive_gamma = args.has("--adaptive-gamma");
    d.branches = args.integer("--draft-tree", d.branches);
    return d;
}

NgramSpec ngram_spec(const Args& args) {
    NgramSpec n;
    n.max_tokens = args.integer("--ngram", n.max_tokens);
    n.max_match = args.integer("--ngram-match", n.max_match);
    n.branches = args.integer("--ngram-branches", n.branches);
    return n;
}

EagleSpec eagle_spec(const Args& args) {
    EagleSpec e;
    e.layer = args.str("--eagle", "");
    e.tree = parse_eagle_tree(args.str("--eagle-tree", eagle_tree_word(e.tree)));
    e.top_k = args.integer("--eagle-topk", e.top_k);
    e.depth = args.integer("--eagle-depth", e.depth);
    e.nodes = args.integer("--eagle-nodes", e.nodes);
    return e;
}

AutoSpec auto_spec(const Args& args) {
    AutoSpec a;
    a.ngram = ngram_spec(args);
    // The flags' drafters, else what was trained for this model (recognised by its content) and
    // left in the cache.
    a.trained_cache = default_cache_dir();
    if (args.has("--heads") || args.has("--tree") || args.has("--num-heads")) a.medusa = medusa_spec(args);
    if (args.has("--eagle")) {
        a.eagle = eagle_spec(args);
        a.eagle->layer = a.eagle->layer.substr(0, a.eagle->layer.find(','));  // bench --compare may name several: auto takes the first
    }
    if (args.has("--draft-model")) a.draft = draft_model_spec(args, args.str("--draft-model"));
    return a;
}

DecodingSpec decoding_spec(const Args& args) {
    const bool medusa = args.has("--heads") || args.has("--tree") || args.has("--num-heads");
    const bool draft = args.has("--draft-model");
    const bool ngram = args.has("--ngram");
    const bool eagle = args.has("--eagle");
    if (args.has("--speculate") && args.str("--speculate") != "auto")
        throw UsageError("--speculate takes 'auto' (every drafter available, chosen step by step); one drafter is "
                         "named by its own flags");
    const bool automatic = args.has("--speculate");
    if (!automatic && int(medusa) + int(draft) + int(ngram) + int(eagle) > 1)
        throw UsageError("choose one drafter: Medusa heads (--heads/--tree), --draft-model, --ngram or --eagle");
    for (const char* flag : {"--eagle-tree", "--eagle-topk", "--eagle-depth", "--eagle-nodes"})
        if (!eagle && args.has(flag)) throw UsageError(std::string(flag) + " needs --eagle DIR");
    if (!draft && (args.has("--gamma") || args.has("--draft-tree") || args.has("--adaptive-gamma")))
        throw UsageError("--gamma, --adaptive-gamma and --draft-tree need --draft-model");
    for (const char* flag : {"--ngram-match", "--ngram-branches"})
        if (!ngram && args.has(flag)) throw UsageError(std::string(flag) + " needs --ngram N");
    DecodingSpec spec = sampling_spec(args);
    if (automatic) spec.drafter = auto_spec(args);
    else if (medusa) spec.drafter = medusa_spec(args);
    else if (draft) spec.drafter = draft_model_spec(args, args.str("--draft-model"));
    else if (ngram) spec.drafter = ngram_spec(args);
    else if (eagle) spec.drafter = eagle_spec(args);
    check_spec(spec);
    return spec;
}

DecodingSpec sampling_spec(const Args& args, float default_temperature) {
    DecodingSpec spec;
    spec.sampling = sampling_params(args, default_temperature);
    spec.max_new_tokens = args.integer("--n-predict", 256);
    spec.rule = as_usage_error(
        [&] { return parse_accept_rule(args.str("--accept", spec.sampling.temperature > 0 ? "sample" : "greedy")); });
    spec.typical.eps = args.number("--typical-eps", spec.typical.eps);
    spec.typical.delta = args.number("--typical-delta", spec.typical.delta);
    if (args.has("--fixed-shape")) spec.shaping = StepShaping::Fixed;
    check_spec(spec);
    return spec;
}

void check_spec(const DecodingSpec& spec) {
    as_usage_error([&] { return validate(spec), 0; });
}

Drafting make_drafting(const DrafterSpec& spec, const ModelFile& target, Engine& engine, StepShaping shaping) {
    Drafting d = as_usage_error([&] {
        return build_drafting(spec, {.file = target, .runner = *engine.runner, .gpu = engine.gpu, .context = engine.context},
                              nullptr, measuring_progress(), shaping);
    });
    for (const std::string& w : d.warnings) std::fprintf(stderr, "warning: %s\n", terminal_safe(w).c_str());
    return d;
}

std::string statistics_line(const DecodingSpec& spec, const Drafting& drafting, AcceptRule rule, const Engine& engine,
                            const GenerationStats& stats) {
    char buf[256];  // numbers only: the summary and the device's name may be long
    std::snprintf(buf, sizeof buf, ": %d prompt tokens in %.1f ms, %d new tokens in %d steps (%.2f tokens/step",
                  stats.prompt_tokens, stats.prefill_ms, stats.new_tokens, stats.steps, stats.tokens_per_step());
    std::string line = drafting.summary + ", " + accept_rule_name(rule) + ", on " + engine.device_name() + buf;
    if (drafter_kind(spec.drafter) != DrafterKind::Plain) {
        // Under the step controller a drafter may draft on few steps or none: say so, not "0.00".
        if (stats.drafted_steps == 0)
            std::snprintf(buf, sizeof buf, ", nothing drafted: %s on all %d steps",
                          spec.shaping == StepShaping::Controlled ? "the step controller decoded plainly"
                                                                 : "the drafter proposed nothing",
                          stats.steps);
        else
            std::snprintf(buf, sizeof buf, ", drafted on %d of %d steps, %.2f of drafted accepted", stats.drafted_steps,
                          stats.steps, stats.acceptance());
        line += buf;
    }
    std::snprintf(buf, sizeof buf, ", %.2f submits/step) at %.1f tokens/s (stop: %s)", stats.submits_per_step(),
                  stats.decode_tokens_per_s(), stop_reason_name(stats.stop_reason));
    return line + buf;
}

}  // namespace medusa::cli
