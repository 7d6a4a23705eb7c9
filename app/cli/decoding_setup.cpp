#include "decoding_setup.h"

#include <chrono>
#include <cmath>

#include "context_size.h"
#include "decode/draft_model_drafter.h"
#include "decode/eagle_drafter.h"
#include "decode/medusa_drafter.h"
#include "decode/ngram_drafter.h"
#include "llm/cpu_tree_runner.h"
#include "llm/eagle_layer_io.h"
#include "llm/gpu_tree_runner.h"
#include "session.h"

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
        e.runner = std::make_unique<GpuTreeRunner>(*e.gpu_model, options.timestamps);
    }
    return e;
}

std::unique_ptr<TreeRunner> gpu_runner(GpuModel& model, bool timestamps) {
    return std::make_unique<GpuTreeRunner>(model, timestamps);
}

Engine borrowed_engine(GpuModel& model) {
    Engine e;
    e.gpu = &model.context();
    e.context = model.config().seq_len;
    e.runner = gpu_runner(model);
    return e;
}

DraftMode draft_mode(const Args& args) {
    const bool medusa = args.has("--heads") || args.has("--tree") || args.has("--num-heads");
    const bool draft = args.has("--draft-model");
    const bool ngram = args.has("--ngram");
    const bool eagle = args.has("--eagle");
    if (int(medusa) + int(draft) + int(ngram) + int(eagle) > 1)
        throw UsageError("choose one drafter: Medusa heads (--heads/--tree), --draft-model, --ngram or --eagle");
    for (const char* flag : {"--eagle-tree", "--eagle-topk", "--eagle-depth", "--eagle-nodes"})
        if (!eagle && args.has(flag)) throw UsageError(std::string(flag) + " needs --eagle DIR");
    if (!draft && (args.has("--gamma") || args.has("--draft-tree") || args.has("--adaptive-gamma")))
        throw UsageError("--gamma, --adaptive-gamma and --draft-tree need --draft-model");
    return medusa  ? DraftMode::Medusa
           : draft ? DraftMode::DraftModel
           : ngram ? DraftMode::Ngram
           : eagle ? DraftMode::Eagle
                   : DraftMode::Plain;
}


DrafterSetup make_drafter(const Args& args, DraftMode mode, const ModelFile& target, Engine& engine,
                          const std::string& draft_path) {
    DrafterSetup s;
    try {
        switch (mode) {
            case DraftMode::Plain:
                s.drafter = std::make_unique<NoDrafter>();
                s.description = "plain decoding";
                break;
            case DraftMode::Medusa: {
                s.tree = open_tree(args);
                s.heads = open_heads(args, target);
                s.drafter = std::make_unique<MedusaDrafter>(*engine.runner, target, s.heads, s.tree);
                s.description = "medusa (" + s.heads.source + ", " + std::to_string(s.heads.count()) + " heads, " +
                                std::to_string(s.tree.num_nodes) + "-node tree)";
                break;
            }
            case DraftMode::DraftModel: {
                s.draft_path = draft_path.empty() ? args.str("--draft-model") : draft_path;
                s.draft_file = load_draft_model(s.draft_path, target);
                LanguageModel* draft = nullptr;
                const int draft_context = draft_context_size(engine.context, s.draft_file.config);
                if (engine.gpu) {
                    s.draft_gpu = std::make_unique<GpuModel>(*engine.gpu, s.draft_file, GpuModelOptions{.context = draft_context});
                    draft = s.draft_gpu.get();
                } else {
                    s.draft_cpu = std::make_unique<CpuReferenceModel>(s.draft_file, draft_context);
                    draft = s.draft_cpu.get();
                }
                DraftModelOptions o;
                o.gamma = args.integer("--gamma", 4);
                if (o.gamma < 1 || o.gamma > TokenBlock::kMaxTokens - 1)
                    throw UsageError("--gamma must be in 1.." + std::to_string(TokenBlock::kMaxTokens - 1));
                o.adaptive_gamma = args.has("--adaptive-gamma");
                o.max_gamma = std::max(o.gamma, 16);
                o.branches = args.integer("--draft-tree", 1);
                if (o.branches < 1 || o.branches > 8) throw UsageError("--draft-tree must be 1..8 branches");
                s.drafter = std::make_unique<DraftModelDrafter>(*draft, o);
                s.description = "draft " + s.draft_path.substr(s.draft_path.find_last_of('/') + 1) + " (gamma " +
                                std::to_string(o.gamma) + (o.adaptive_gamma ? " adaptive" : "") +
                                (o.branches > 1 ? ", tree of " + std::to_string(o.branches) + " branches" : "") + ")";
                break;
            }
            case DraftMode::Ngram: {
                NgramOptions o;
                o.max_tokens = args.integer("--ngram", 8);
                o.max_match = args.integer("--ngram-match", 4);
                o.branches = args.integer("--ngram-branches", 1);
                if (o.max_tokens < 1 || o.max_tokens > TokenBlock::kMaxTokens - 1)
                    throw UsageError("--ngram must be in 1.." + std::to_string(TokenBlock::kMaxTokens - 1));
                if (o.max_match < 1) throw UsageError("--ngram-match must be >= 1");
                if (o.branches < 1 || o.branches > 16) throw UsageError("--ngram-branches must be 1..16");
                s.drafter = std::make_unique<NgramDrafter>(o);
                s.description = "n-gram lookup (up to " + std::to_string(o.max_tokens) + " tokens, matches of up to " +
                                std::to_string(o.max_match) + ")";
                break;
            }
            case DraftMode::Eagle: {
                const EagleLayer layer = load_eagle_layer(args.str("--eagle"), target.config);
                EagleOptions o;
                o.top_k = args.integer("--eagle-topk", o.top_k);
                o.depth = args.integer("--eagle-depth", o.depth);
                o.nodes = args.integer("--eagle-nodes", o.nodes);
                const std::string tree = args.str("--eagle-tree", "dynamic");
                if (tree != "dynamic") o.choices = load_tree(tree, {.topk = 32, .max_depth = 16}).choices;
                s.eagle = engine.runner->eagle_runner(target, layer);
                s.drafter = std::make_unique<EagleDrafter>(*s.eagle, o);
                s.description = "eagle (" + layer.source + ", " +
                                (o.choices.empty() ? "EAGLE-2 dynamic tree: top-" + std::to_string(o.top_k) + ", depth " +
                                                         std::to_string(o.depth) + ", " + std::to_string(o.nodes) + " nodes"
                                                   : "EAGLE-1 tree " + tree) +
                                ")";
                break;
            }
        }
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    return s;
}

DecodeOptions decode_options(const Args& args) {
    DecodeOptions o;
    o.max_new_tokens = args.integer("--n-predict", 256);
    SamplingParams& s = o.sampling;
    s.temperature = args.number("--temp", 0.8f);
    s.top_p = args.number("--top-p", 0.95f);
    s.top_k = args.integer("--top-k", 0);
    s.repeat_penalty = args.number("--repeat-penalty", 1.0f);
    s.repeat_last_n = args.integer("--repeat-last-n", 64);
    s.seed = args.has("--seed") ? uint64_t(args.integer("--seed", 0))
                                : uint64_t(std::chrono::system_clock::now().time_since_epoch().count());
    if (o.max_new_tokens < 0) throw UsageError("-n must be >= 0");
    if (s.temperature < 0) throw UsageError("--temp must be >= 0");
    if (s.top_p <= 0 || s.top_p > 1) throw UsageError("--top-p must be in (0, 1]");
    if (s.top_k < 0) throw UsageError("--top-k must be >= 0 (0: off)");
    if (s.repeat_penalty <= 0) throw UsageError("--repeat-penalty must be > 0 (1: off)");
    if (s.repeat_last_n < 0) throw UsageError("--repeat-last-n must be >= 0");
    try {
        o.rule = parse_accept_rule(args.str("--accept", s.temperature > 0 ? "sample" : "greedy"));
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    o.typical.eps = args.number("--typical-eps", o.typical.eps);
    o.typical.delta = args.number("--typical-delta", o.typical.delta);
    if (o.typical.eps < 0 || o.typical.delta < 0) throw UsageError("--typical-eps and --typical-delta must be >= 0");
    return o;
}

}  // namespace medusa::cli
