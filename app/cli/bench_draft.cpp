#include "bench_draft.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <sstream>

#include "decode/autoregressive.h"
#include "decode/draft_decoder.h"
#include "decode/medusa_decoder.h"
#include "draft_generate.h"
#include "session.h"

namespace medusa::cli {

namespace {

using json = nlohmann::json;

struct RunFigures {
    GenerationStats stats;
    long drafted = 0, accepted = 0, draft_forwards = 0;
};

struct Mode {
    std::string name;
    double tokens_per_s = 0;
    long tokens = 0, target_forwards = 0, drafted = 0, accepted = 0, draft_forwards = 0;
    json stage_ms = json::object();
    double tau() const { return target_forwards ? double(tokens) / target_forwards : 0; }
    double alpha() const { return drafted ? double(accepted) / drafted : 0; }
};

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

json stages_json(const std::vector<gpu::StageTime>& st) {
    json j = json::object();
    for (const auto& s : st) j[s.stage] = {{"ms", s.ms}, {"dispatches", s.dispatches}};
    return j;
}

// Every prompt `runs` times; the median run's rate. The first token of each prompt comes from
// the prompt's own forward pass in every mode, so it is left out of rates and of tau.
Mode time_mode(const std::string& name, const std::vector<std::vector<int>>& prompts, int runs,
               const std::function<RunFigures(const std::vector<int>&)>& gen) {
    Mode m;
    m.name = name;
    std::vector<double> rates;
    for (int r = 0; r < runs; ++r) {
        Mode run;
        double ms = 0;
        for (const auto& p : prompts) {
            RunFigures f = gen(p);
            ms += f.stats.decode_ms;
            run.tokens += f.stats.new_tokens - 1;
            run.target_forwards += f.stats.forward_passes;
            run.drafted += f.drafted;
            run.accepted += f.accepted;
            run.draft_forwards += f.draft_forwards;
        }
        rates.push_back(run.tokens * 1000.0 / ms);
        run.name = name;
        m = run;
        std::fprintf(stderr, "\r%s: run %d/%d: %.1f tokens/s, tau %.2f   ", name.c_str(), r + 1, runs, rates.back(),
                     run.tau());
    }
    std::fprintf(stderr, "\n");
    std::sort(rates.begin(), rates.end());
    m.tokens_per_s = rates[rates.size() / 2];
    return m;
}

DraftOptions draft_options(const Args& args, int n_tokens) {
    DraftOptions o;
    o.gamma = std::clamp(args.integer("--gamma", 4), 1, TokenBlock::kMaxTokens - 1);
    o.adaptive_gamma = args.has("--adaptive-gamma");
    o.max_gamma = std::max(o.gamma, 16);
    o.max_new_tokens = n_tokens;
    return o;
}

Mode bench_draft_mode(const Args& args, GpuModel& model, const ModelFile& file, const std::string& path,
                      const std::vector<std::vector<int>>& prompts, int n_tokens, int runs) {
    ModelFile draft_file = open_draft_model(path, file);
    GpuModel draft(model.context(), draft_file);
    DraftOptions o = draft_options(args, n_tokens);
    DraftDecoder decoder(model, draft, o);
    const std::string name = "draft:" + path.substr(path.find_last_of('/') + 1);
    Mode m = time_mode(name, prompts, runs, [&](const std::vector<int>& p) {
        RunFigures f;
        f.stats = decoder.generate(p, [](const StepTrace&) { return true; });
        f.drafted = decoder.draft_stats().drafted;
        f.accepted = decoder.draft_stats().accepted;
        f.draft_forwards = decoder.draft_stats().draft_forwards;
        return f;
    });
    // Per-stage GPU time: the last verify forward of the target and the last draft forward.
    GpuModel timed_target(model.context(), file, {.timestamps = true});
    GpuModel timed_draft(model.context(), draft_file, {.timestamps = true});
    o.max_new_tokens = std::min(n_tokens, 16);
    DraftDecoder profiler(timed_target, timed_draft, o);
    profiler.generate(prompts.front(), [](const StepTrace&) { return true; });
    m.stage_ms = {{"verify_forward", stages_json(timed_target.stage_times())},
                  {"draft_forward", stages_json(timed_draft.stage_times())}};
    return m;
}

json mode_json(const Mode& m, double ar_rate) {
    json j = {{"tokens_per_s", m.tokens_per_s}, {"ratio_to_ar", ar_rate > 0 ? m.tokens_per_s / ar_rate : 0.0},
              {"tau", m.tau()}, {"tokens", m.tokens}, {"target_forwards", m.target_forwards},
              {"step_gpu_ms", m.stage_ms}};
    if (m.drafted) {
        j["alpha"] = m.alpha();
        j["drafted"] = m.drafted;
        j["accepted"] = m.accepted;
    }
    if (m.draft_forwards) j["draft_forwards"] = m.draft_forwards;
    return j;
}

}  // namespace

json bench_compare(const Args& args, GpuModel& model, const ModelFile& file, const std::vector<int>& fallback_prompt,
                   int n_tokens, int runs) {
    const std::vector<std::string> modes = split(args.str("--compare", "ar,medusa,draft"));
    std::vector<std::vector<int>> prompts;
    if (auto tok = try_open_tokenizer(args, file))
        for (const char* text : {"Once upon a time", "The little dog", "Tom and Sue went to the park", "One day"})
            prompts.push_back(tok->encode(text, true));
    else
        prompts.push_back(fallback_prompt);
    n_tokens = std::min(n_tokens, model.config().seq_len - 160);  // room for the longest prompt and a tree

    std::vector<Mode> results;
    for (const auto& mode : modes) {
        if (mode == "ar") {
            GenerationOptions o;
            o.max_new_tokens = n_tokens;
            o.sampling.temperature = 0;
            Mode m = time_mode("ar", prompts, runs, [&](const std::vector<int>& p) {
                return RunFigures{generate_autoregressive(model, p, o, [](int) { return true; })};
            });
            GpuModel timed(model.context(), file, {.timestamps = true});
            GenerationOptions t = o;
            t.max_new_tokens = 8;
            generate_autoregressive(timed, prompts.front(), t, [](int) { return true; });
            m.stage_ms = stages_json(timed.stage_times());
            results.push_back(m);
        } else if (mode == "medusa") {
            TreeBuffers tree = open_tree(args);
            MedusaHeads heads = open_heads(args, file);
            MedusaOptions o;
            o.max_new_tokens = n_tokens;
            MedusaDecoder decoder(model, file, heads, tree, o);
            Mode m = time_mode("medusa", prompts, runs, [&](const std::vector<int>& p) {
                RunFigures f;
                f.stats = decoder.generate(p, [&](const StepTrace& s) {
                    if (s.nodes.size() > 1) f.drafted += tree.max_depth, f.accepted += s.accepted;
                    return true;
                });
                return f;
            });
            o.timestamps = true;
            o.max_new_tokens = std::min(n_tokens, 16);
            MedusaDecoder profiler(model, file, heads, tree, o);
            profiler.generate(prompts.front(), [&](const StepTrace& s) {
                if (!s.stage_ms.empty()) {
                    m.stage_ms = json::object();
                    for (const auto& [stage, ms] : s.stage_ms) m.stage_ms[stage] = ms;
                }
                return true;
            });
            results.push_back(m);
        } else if (mode == "draft") {
            if (!args.has("--draft-model")) throw UsageError("--compare draft needs --draft-model FILE[,FILE]");
            for (const auto& path : split(args.str("--draft-model")))
                results.push_back(bench_draft_mode(args, model, file, path, prompts, n_tokens, runs));
        } else {
            throw UsageError("unknown --compare mode '" + mode + "' (ar, medusa, draft)");
        }
    }

    double ar_rate = 0;
    for (const auto& m : results)
        if (m.name == "ar") ar_rate = m.tokens_per_s;
    json j;
    j["prompts"] = prompts.size();
    j["new_tokens_per_prompt"] = n_tokens;
    j["runs"] = runs;
    j["gamma"] = draft_options(args, n_tokens).gamma;
    j["adaptive_gamma"] = args.has("--adaptive-gamma");
    j["note"] = "greedy decoding; tau = tokens per target forward; alpha = accepted / drafted (medusa: per tree depth)";
    std::printf("%-24s %10s %8s %7s %7s %10s %10s\n", "mode", "tokens/s", "x AR", "tau", "alpha", "target fw",
                "draft fw");
    for (const auto& m : results) {
        j["modes"][m.name] = mode_json(m, ar_rate);
        std::printf("%-24s %10.1f %8.2f %7.2f %7s %10ld %10ld\n", m.name.c_str(), m.tokens_per_s,
                    ar_rate > 0 ? m.tokens_per_s / ar_rate : 0.0, m.tau(),
                    m.drafted ? std::to_string(m.alpha()).substr(0, 5).c_str() : "-", m.target_forwards,
                    m.draft_forwards);
    }
    return j;
}

}  // namespace medusa::cli
