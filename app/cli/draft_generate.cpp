#include "draft_generate.h"

#include <cstdio>
#include <fstream>
#include <memory>

#include "decode/draft_decoder.h"
#include "llm/cpu_reference.h"
#include "llm/gpu_model.h"
#include "session.h"

namespace medusa::cli {

ModelFile open_draft_model(const std::string& path, const ModelFile& target) {
    ModelFile draft = load_model(path);
    try {
        check_draft_compatible(target.config, draft.config, target.path, path);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    // Same size is not the same tokenizer: when both files carry one, they must agree.
    if (!target.embedded_tokenizer.empty() && !draft.embedded_tokenizer.empty() &&
        target.embedded_tokenizer != draft.embedded_tokenizer)
        throw UsageError("the draft model " + path + " embeds a different tokenizer from the target model " +
                         target.path + ": a draft model must use the target's tokenizer");
    return draft;
}

int run_draft_generate(const Args& args, const ModelFile& target_file, const Tokenizer& tokenizer,
                       const std::string& prompt, const GenerationOptions& options) {
    ModelFile draft_file = open_draft_model(args.str("--draft-model"), target_file);
    DraftOptions o;
    o.gamma = args.integer("--gamma", 4);
    if (o.gamma < 1 || o.gamma > TokenBlock::kMaxTokens - 1)
        throw UsageError("--gamma must be in 1.." + std::to_string(TokenBlock::kMaxTokens - 1));
    o.adaptive_gamma = args.has("--adaptive-gamma");
    o.max_gamma = std::max(o.gamma, 16);
    try {
        o.rule = parse_draft_rule(args.str("--accept", options.sampling.temperature > 0 ? "sample" : "greedy"));
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    o.temperature = options.sampling.temperature;
    o.top_p = options.sampling.top_p;
    o.top_k = options.sampling.top_k;
    o.repeat_penalty = options.sampling.repeat_penalty;
    o.repeat_last_n = options.sampling.repeat_last_n;
    o.seed = options.sampling.seed;
    o.max_new_tokens = options.max_new_tokens;
    o.stop_tokens = options.stop_tokens;

    std::ofstream trace_file = open_trace(args);
    std::unique_ptr<gpu::Context> gpu;
    std::unique_ptr<LanguageModel> target, draft;
    if (args.has("--cpu")) {
        target = std::make_unique<CpuReferenceModel>(target_file);
        draft = std::make_unique<CpuReferenceModel>(draft_file);
    } else {
        gpu = open_gpu(args, &target_file);
        target = std::make_unique<GpuModel>(*gpu, target_file);
        draft = std::make_unique<GpuModel>(*gpu, draft_file);
    }
    DraftDecoder decoder(*target, *draft, o);
    std::vector<int> tokens = tokenizer.encode(prompt, true);
    std::fputs(prompt.c_str(), stdout);
    std::fflush(stdout);
    int prev = tokens.back();
    GenerationStats stats = decoder.generate(tokens, [&](const StepTrace& step) {
        for (int token : step.emitted) {
            std::string piece = tokenizer.piece_text(prev, token);
            std::fwrite(piece.data(), 1, piece.size(), stdout);
            prev = token;
        }
        std::fflush(stdout);
        if (trace_file.is_open()) trace_file << step.to_json() << "\n";
        return true;
    });
    std::fputs("\n", stdout);
    std::fflush(stdout);  // the text ends before the statistics on stderr
    if (stats.stop_reason == "context")
        std::fprintf(stderr, "note: reached the end of the model's context (%d tokens)\n", target->config().seq_len);
    const DraftStats& d = decoder.draft_stats();
    if (!args.has("--quiet"))
        std::fprintf(stderr,
                     "draft (%s, gamma %d%s, %s) on %s: %d new tokens in %ld target steps (tau %.2f tokens/step, "
                     "alpha %.2f of %ld drafted) at %.1f tokens/s; draft %.1f ms, verify %.1f ms (stop: %s)\n",
                     draft_file.path.c_str(), o.gamma, o.adaptive_gamma ? " adaptive" : "", draft_rule_name(o.rule),
                     gpu ? gpu->info().name.c_str() : "cpu", stats.new_tokens, d.steps, d.tau(), d.alpha(), d.drafted,
                     stats.decode_tokens_per_s(), d.draft_ms, d.verify_ms, stats.stop_reason.c_str());
    if (gpu && gpu->validation_messages() > 0) {
        std::fprintf(stderr, "error: %d Vulkan validation message(s)\n", gpu->validation_messages());
        return 3;
    }
    return 0;
}

}  // namespace medusa::cli
