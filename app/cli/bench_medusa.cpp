#include "bench_medusa.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "decode/medusa_decoder.h"
#include "session.h"

namespace medusa::cli {

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

struct ModeResult {
    double tokens_per_s = 0;
    double tokens_per_step = 0;  // tau: tokens per forward pass of the model
    long forward_passes = 0;
    long tokens = 0;
    nlohmann::json stage_ms = nlohmann::json::object();
};

// Greedy decoding of every prompt `runs` times; the median run's rate over all prompts.
ModeResult run_mode(GpuModel& model, const ModelFile& file, const MedusaHeads& heads, const TreeBuffers& tree,
                    const std::vector<std::vector<int>>& prompts, int n_tokens, int runs, const char* label) {
    MedusaOptions o;
    o.max_new_tokens = n_tokens;
    MedusaDecoder decoder(model, file, heads, tree, o);
    std::vector<double> rates;
    ModeResult r;
    for (int run = 0; run < runs; ++run) {
        double ms = 0;
        long tokens = 0, passes = 0;
        for (const auto& p : prompts) {
            auto s = decoder.generate(p, [](const StepTrace&) { return true; });
            ms += s.decode_ms;
            tokens += s.new_tokens - 1;  // the first token comes from the prompt's forward pass
            passes += s.forward_passes;
        }
        rates.push_back(tokens * 1000.0 / ms);
        r.tokens = tokens;
        r.forward_passes = passes;
        std::fprintf(stderr, "\r%s: run %d/%d: %.1f tokens/s, %.2f tokens/step   ", label, run + 1, runs,
                     rates.back(), passes ? double(tokens) / passes : 0.0);
    }
    std::fprintf(stderr, "\n");
    r.tokens_per_s = median(rates);
    r.tokens_per_step = r.forward_passes ? double(r.tokens) / r.forward_passes : 0;
    // One more short pass with timestamps for the per-stage GPU time of a step.
    MedusaOptions timed = o;
    timed.timestamps = true;
    timed.max_new_tokens = std::min(n_tokens, 16);
    MedusaDecoder profiler(model, file, heads, tree, timed);
    StepTrace last;
    profiler.generate(prompts.front(), [&](const StepTrace& s) {
        if (!s.stage_ms.empty()) last = s;
        return true;
    });
    for (const auto& [stage, ms] : last.stage_ms) r.stage_ms[stage] = ms;
    return r;
}

nlohmann::json to_json(const ModeResult& r) {
    return {{"tokens_per_s", r.tokens_per_s}, {"tokens_per_step", r.tokens_per_step},
            {"forward_passes", r.forward_passes}, {"tokens", r.tokens}, {"step_gpu_ms", r.stage_ms}};
}

}  // namespace

nlohmann::json bench_medusa(const Args& args, GpuModel& model, const ModelFile& file,
                            const std::vector<std::vector<int>>& prompts, int n_tokens, int runs) {
    TreeBuffers tree = open_tree(args);
    MedusaHeads heads = open_heads(args, file);
    TreeBuffers single = build_tree_buffers(load_tree("1"));
    ModeResult ar = run_mode(model, file, heads, single, prompts, n_tokens, runs, "autoregressive");
    ModeResult md = run_mode(model, file, heads, tree, prompts, n_tokens, runs, "medusa");
    nlohmann::json j;
    j["heads"] = heads.source;
    j["num_heads"] = heads.count();
    j["tree"] = args.str("--tree", "mc_sim_7b_63");
    j["tree_nodes"] = tree.num_nodes;
    j["prompts"] = prompts.size();
    j["new_tokens_per_prompt"] = n_tokens;
    j["autoregressive"] = to_json(ar);
    j["medusa"] = to_json(md);
    j["speedup_medusa_over_autoregressive"] = ar.tokens_per_s > 0 ? md.tokens_per_s / ar.tokens_per_s : 0.0;
    j["submits_per_step"] = 1;
    std::printf("%-15s %12s %14s %14s\n", "decoding", "tokens/s", "tokens/step", "forward passes");
    std::printf("%-15s %12.1f %14.2f %14ld\n", "autoregressive", ar.tokens_per_s, ar.tokens_per_step, ar.forward_passes);
    std::printf("%-15s %12.1f %14.2f %14ld\n", "medusa", md.tokens_per_s, md.tokens_per_step, md.forward_passes);
    std::printf("Medusa (%s heads, %d-node tree) / autoregressive: %.2fx\n", heads.source.c_str(), tree.num_nodes,
                j["speedup_medusa_over_autoregressive"].get<double>());
    return j;
}

nlohmann::json bench_verify_latency(GpuModel& model, int prompt_len, int runs, int max_block) {
    nlohmann::json out = nlohmann::json::array();
    std::printf("verify forward latency by block size:");
    for (int n : {1, 8, 16, 32, 64, 128}) {
        if (prompt_len + n > model.config().seq_len || n > max_block) break;
        std::vector<int> tokens(n);
        for (int i = 0; i < n; ++i) tokens[i] = (i * 31 + 7) % model.config().vocab_size;
        TokenBlock block = TokenBlock::causal(prompt_len, tokens);
        model.forward(block);  // records this size's command buffer outside the timing
        std::vector<double> ms;
        for (int r = 0; r < std::max(3, runs); ++r) {
            auto t0 = Clock::now();
            model.forward(block);
            ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        }
        out.push_back({{"tokens", n}, {"ms", median(ms)}});
        std::printf("  %d: %.2f ms", n, median(ms));
    }
    std::printf("\n");
    return out;
}

}  // namespace medusa::cli
