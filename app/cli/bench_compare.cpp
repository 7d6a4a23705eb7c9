#include "bench_compare.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "bench_mode.h"
#include "decode/depth_acceptance.h"
#include "setup/cost_measurement.h"
#include "decoding_setup.h"
#include "model/encode_in_pieces.h"
#include "prompts_file.h"
#include "session.h"

namespace medusa::cli {

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

struct ModeResult {
    charts::BenchMode mode;
    std::string name, description;  // name: the mode's key in the table and the JSON
    double tokens_per_s = 0;
    GenerationStats total;  // summed over the prompts of the median run
    json stage_ms = json::object();
    std::map<DrafterKind, long> steps_by_drafter;  // under the controller: whose proposal each step verified
    DepthAcceptance depths;                        // the first run's steps, depth by depth
    // The cost model's account of the first run: its verify passes priced by the measured curve,
    // against the time the run took. A Medusa stage's and a drafter's own time are not in it: for
    // plain decoding and host-drafted trees it is the whole prediction.
    double predicted_verify_ms = 0, first_run_ms = 0;
    long first_run_tokens = 0;
};

// A mode being timed: its drafter and decoder, kept for every run, and each run's figures.
struct TimedMode {
    ModeResult m;
    Drafting drafting;
    std::unique_ptr<SpeculativeDecoder> decoder;
    std::vector<std::pair<double, GenerationStats>> runs;  // rate over all prompts, sums
};

// Run `r` of every prompt through the mode's decoder (the first run also keeps its accounts).
void run_mode_once(TimedMode& t, const std::vector<std::vector<int>>& prompts, int r, const CostModel& costs) {
    ModeResult& m = t.m;
    GenerationStats sum;
    for (const auto& p : prompts) {
        const GenerationStats s = t.decoder->generate(p, [&](const StepTrace& st) {
            if (r == 0) {
                ++m.steps_by_drafter[st.drafter];
                m.depths.add(st);
                m.predicted_verify_ms += costs.verify.at(int(st.nodes.size()));
            }
            return true;
        });
        if (r == 0) m.first_run_ms += s.decode_ms, m.first_run_tokens += s.new_tokens;
        sum.add(s);
    }
    t.runs.push_back({sum.decode_tokens_per_s(), sum});
}

// The median run's rate over all prompts.
void take_median(TimedMode& t) {
    auto runs = t.runs;
    std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    t.m.tokens_per_s = runs[runs.size() / 2].first;
    t.m.total = runs[runs.size() / 2].second;
}

// Per-stage GPU time of one step that verified a tree (the last such step of a short run).
json step_stages(GpuModel& model, const ModelFile& file, const Drafting& loaded, const DecodeOptions& o,
                 const std::vector<int>& prompt, StepShaping shaping) {
    // A second runner over the same model, with timestamps (they cost time, so not in the timed
    // runs), and the drafter built again on it: a drafting stage belongs to the runner that made it.
    auto timed = gpu_runner(model, true);
    const DraftingTarget target{.file = file, .runner = *timed, .gpu = &model.context(), .context = model.config().seq_len};
    Drafting drafting = build_drafting(loaded.spec, target, &loaded, {}, shaping);
    DecodeOptions t = o;
    t.max_new_tokens = 16;
    json stages = json::object();
    SpeculativeDecoder decoder(*timed, *drafting.drafter, t);
    decoder.generate(prompt, [&](const StepTrace& s) {
        if (!s.stage_ms.empty() && (s.nodes.size() > 1 || stages.empty())) {
            stages = json::object();
            for (const auto& [stage, ms] : s.stage_ms) stages[stage] = ms;
        }
        return true;
    });
    return stages;
}

json mode_json(const ModeResult& m, double plain_rate) {
    const GenerationStats& s = m.total;
    json j = {{"description", m.description},
              {"tokens_per_s", m.tokens_per_s},
              {"ratio_to_plain", plain_rate > 0 ? m.tokens_per_s / plain_rate : 0.0},
              {"tau", s.tokens_per_step()},
              {"steps", s.steps},
              {"tokens", s.new_tokens},
              {"submits_per_step", s.submits_per_step()},
              {"step_gpu_ms", m.stage_ms}};
    for (const auto& [kind, steps] : m.steps_by_drafter) j["steps_by_drafter"][drafter_kind_name(kind)] = steps;
    if (m.predicted_verify_ms > 0 && m.first_run_ms > 0)
        j["cost_model_check"] = {{"predicted_tokens_per_s", m.first_run_tokens * 1000.0 / m.predicted_verify_ms},
                                 {"measured_tokens_per_s", m.first_run_tokens * 1000.0 / m.first_run_ms},
                                 {"note", "the first run's verify passes priced by the cost model's curve alone"}};
    if (m.depths.depth() > 0) {
        json by_depth = json::array();
        for (int k = 1; k <= m.depths.depth(); ++k)
            by_depth.push_back({{"depth", k}, {"drafted", m.depths.drafted[size_t(k - 1)]},
                                {"reached", m.depths.reached[size_t(k - 1)]}, {"rate", m.depths.rate(k)}});
        j["acceptance_by_depth"] = by_depth;
    }
    if (s.drafted) {
        j["alpha"] = s.acceptance();
        j["drafted"] = s.drafted;
        j["accepted"] = s.accepted;
    }
    return j;
}

// Each drafting mode's acceptance by depth on this prompt set (its first run): EAGLE-2 beside
// EAGLE-3, Medusa's heads beside them, the draft model's tokens.
void print_depth_acceptance(const std::vector<ModeResult>& results) {
    int deepest = 0;
    for (const auto& m : results) deepest = std::max(deepest, m.depths.depth());
    if (deepest == 0) return;
    deepest = std::min(deepest, 8);
    std::printf("accepted to depth k, of the steps that drafted that deep:\n%-28s", "mode");
    for (int k = 1; k <= deepest; ++k) std::printf(" %6d", k);
    std::printf("\n");
    for (const auto& m : results) {
        if (m.depths.depth() == 0) continue;
        std::printf("%-28s", m.name.c_str());
        for (int k = 1; k <= deepest; ++k) {
            if (k <= m.depths.depth() && m.depths.drafted[size_t(k - 1)] > 0) std::printf(" %6.3f", m.depths.rate(k));
            else std::printf(" %6s", "-");
        }
        std::printf("\n");
    }
}

// Story prompts the model continues, and for n-gram lookup the same stories retold: BOS, the
// model's own greedy story, then its first words again, which the model tends to repeat.
std::vector<std::vector<int>> retell_prompts(const ModelFile& file, TreeRunner& runner,
                                             const std::vector<std::vector<int>>& prompts, int story_tokens) {
    const DecodingSpec greedy{.max_new_tokens = story_tokens};
    Drafting plain = build_drafting(greedy.drafter, {.file = file, .runner = runner});
    SpeculativeDecoder d(runner, *plain.drafter, decode_options(greedy, {}));
    std::vector<std::vector<int>> out;
    for (const auto& p : prompts) {
        std::vector<int> story = p;
        d.generate(p, [&](const StepTrace& s) {
            story.insert(story.end(), s.emitted.begin(), s.emitted.end());
            return true;
        });
        std::vector<int> retell = story;
        retell.insert(retell.end(), p.begin() + 1, p.end());
        out.push_back(retell);
    }
    return out;
}

// --prompts FILE as a prompt set named after the file, each prompt encoded with BOS; every prompt
// must leave room in the context for the new tokens and one verified block.
std::pair<std::string, std::vector<std::vector<int>>> user_prompt_set(const Args& args, const ModelFile& file, int ctx,
                                                                      int n_tokens) {
    const std::string path = args.str("--prompts");
    const auto tok = try_open_tokenizer(args, file);
    if (!tok) throw UsageError("--prompts needs the model's tokenizer (--tokenizer FILE)");
    const std::vector<std::string> texts = read_prompts_file(path);
    check_prompt_bytes(texts, path, *tok, ctx, n_tokens + TokenBlock::kMaxTokens,
                       "with " + std::to_string(n_tokens) + " new tokens and a verified block (--tokens, -c)");
    std::vector<std::vector<int>> set;
    for (const std::string& text : texts) {
        set.push_back(encode_in_pieces(*tok, text, true, false, path + ": prompt " + std::to_string(set.size() + 1)));
        const int need = int(set.back().size()) + n_tokens + TokenBlock::kMaxTokens;
        if (need > ctx)
            throw UsageError(path + ": prompt " + std::to_string(set.size()) + " has " +
                             std::to_string(set.back().size()) + " tokens; with " + std::to_string(n_tokens) +
                             " new tokens and a verified block it needs " + std::to_string(need) +
                             " positions, more than the context of " + std::to_string(ctx) + " (--tokens, -c)");
    }
    std::string name = std::filesystem::path(path).stem().string();
    if (name == "stories" || name == "retell") name += " (file)";
    return {name, set};
}

// The modes --compare lists, in its order; throws UsageError naming a word that is none.
std::vector<charts::BenchMode> compared_modes(const Args& args) {
    std::vector<charts::BenchMode> out;
    for (const std::string& word : split(args.str("--compare", "plain,medusa"))) {
        const auto m = charts::parse_bench_mode_word(word);
        if (!m) throw UsageError("unknown --compare mode '" + word + "' (plain or ar, medusa, draft, draft-tree, ngram, eagle, auto)");
        out.push_back(*m);
    }
    return out;
}

// The drafters `--compare MODE` stands for, each as the column it fills: a draft mode has one per
// --draft-model file, EAGLE one per --eagle folder.
std::vector<std::pair<charts::BenchMode, DrafterSpec>> compared_drafters(const Args& args, const charts::BenchMode& mode) {
    switch (mode.kind) {
        case DrafterKind::Plain: return {{mode, PlainSpec{}}};
        case DrafterKind::Medusa: return {{mode, medusa_spec(args)}};
        case DrafterKind::Ngram: return {{mode, ngram_spec(args)}};
        case DrafterKind::Auto: return {{mode, auto_spec(args)}};
        case DrafterKind::DraftModel: {
            const std::string flag = "--compare " + charts::bench_mode_key(mode);
            if (!args.has("--draft-model")) throw UsageError(flag + " needs --draft-model FILE[,FILE]");
            std::vector<std::pair<charts::BenchMode, DrafterSpec>> out;
            for (const auto& path : split(args.str("--draft-model"))) {
                DraftModelSpec d = draft_model_spec(args, path);
                d.branches = !mode.tree ? 1 : args.has("--draft-tree") ? d.branches : 2;
                charts::BenchMode file = mode;
                file.variant = path.substr(path.find_last_of('/') + 1);
                out.push_back({file, d});
            }
            return out;
        }
        case DrafterKind::Eagle: {  // one per folder: EAGLE-2 beside EAGLE-3, say
            if (!args.has("--eagle")) throw UsageError("--compare eagle needs --eagle DIR[,DIR]");
            const std::vector<std::string> folders = split(args.str("--eagle"));
            std::vector<std::pair<charts::BenchMode, DrafterSpec>> out;
            for (const auto& path : folders) {
                EagleSpec e = eagle_spec(args);
                e.layer = path;
                const std::string name = std::filesystem::path(path).lexically_normal().filename().string();
                charts::BenchMode folder = mode;
                if (folders.size() > 1) folder.variant = name.empty() ? path : name;
                out.push_back({folder, e});
            }
            return out;
        }
    }
    return {};
}

}  // namespace

json bench_compare(const Args& args, GpuModel& model, const ModelFile& file, const std::vector<int>& fallback_prompt,
                   int n_tokens, int runs) {
    const std::vector<charts::BenchMode> modes = compared_modes(args);
    std::vector<std::vector<int>> prompts;
    if (auto tok = try_open_tokenizer(args, file))
        for (const char* text : {"Once upon a time", "The little dog", "Tom and Sue went to the park", "One day"})
            prompts.push_back(tok->encode(text, true));
    else
        prompts.push_back(fallback_prompt);
    const int ctx = model.config().seq_len;
    n_tokens = std::max(1, std::min(n_tokens, ctx / 2 - 40));  // room for the longest prompt, retold
    DecodingSpec spec = sampling_spec(args, 0.0f);
    spec.max_new_tokens = n_tokens;
    const DecodeOptions o = decode_options(spec, {});  // no stop tokens: every mode decodes as many tokens

    Engine engine = borrowed_engine(model);  // shared by every mode (draft models use its device)
    // The step controller's cost model, measured again (a benchmark is when the machine is quiet).
    const CostModel costs = target_costs({.file = file, .runner = *engine.runner, .gpu = engine.gpu, .context = engine.context},
                                         CostRefresh::Remeasure,
                                         [](const std::string& line) { std::fprintf(stderr, "\r%s   ", line.c_str()); });
    std::fprintf(stderr, "\n");
    std::vector<std::pair<std::string, std::vector<std::vector<int>>>> sets = {{"stories", prompts}};
    if (std::any_of(modes.begin(), modes.end(),
                    [](const charts::BenchMode& m) { return m.kind == DrafterKind::Ngram || m.kind == DrafterKind::Auto; }))
        sets.push_back({"retell", retell_prompts(file, *engine.runner, prompts, std::min(120, ctx / 3))});
    if (args.has("--prompts")) sets.push_back(user_prompt_set(args, file, ctx, n_tokens));

    json out;
    out["cost_model"] = costs.to_json();
    out["shaping"] = spec.shaping == StepShaping::Controlled ? "controlled" : "fixed";
    out["new_tokens_per_prompt"] = n_tokens;
    out["runs"] = runs;
    out["temperature"] = o.sampling.temperature;
    out["note"] = "tau = tokens per verify pass of the target; alpha = accepted / drafted depth; "
                  "submits per step include a draft model's own forwards; predicted = tokens/s the cost model's "
                  "verify curve gives the first run's passes (a drafter's own forwards not counted)";
    for (const auto& [set_name, set_prompts] : sets) {
        // Every mode's drafter and decoder first, then the runs in rounds over the modes: whatever
        // else the machine does slows them all alike instead of whichever mode was running.
        std::vector<std::unique_ptr<TimedMode>> timed;
        for (const auto& mode : modes) {
            for (auto& [column, drafter] : compared_drafters(args, mode)) {
                spec.drafter = drafter;
                check_spec(spec);
                if (std::holds_alternative<AutoSpec>(drafter) && spec.shaping == StepShaping::Fixed) continue;
                auto t = std::make_unique<TimedMode>();
                t->drafting = make_drafting(drafter, file, engine, spec.shaping);
                t->decoder = std::make_unique<SpeculativeDecoder>(*engine.runner, *t->drafting.drafter, o);
                t->m.mode = column;
                t->m.name = charts::bench_mode_key(column);
                t->m.description = t->drafting.summary;
                timed.push_back(std::move(t));
            }
        }
        for (int r = 0; r < runs; ++r) {
            std::fprintf(stderr, "\r%s: run %d/%d:", set_name.c_str(), r + 1, runs);
            for (auto& t : timed) {
                run_mode_once(*t, set_prompts, r, costs);
                std::fprintf(stderr, " %s %.0f", t->m.name.c_str(), t->runs.back().first);
            }
            std::fprintf(stderr, " tokens/s   ");
        }
        std::fprintf(stderr, "\n");
        std::vector<ModeResult> results;
        for (auto& t : timed) {
            take_median(*t);
            t->m.stage_ms = step_stages(model, file, t->drafting, o, set_prompts.front(), spec.shaping);
            results.push_back(t->m);
        }
        double plain_rate = 0;
        for (const auto& m : results)
            if (m.mode.kind == DrafterKind::Plain) plain_rate = m.tokens_per_s;
        std::printf("prompts: %s (%zu, %d new tokens each)\n", set_name.c_str(), set_prompts.size(), n_tokens);
        std::printf("%-28s %10s %8s %7s %7s %9s %8s %10s\n", "mode", "tokens/s", "x plain", "tau", "alpha", "submits", "steps",
                    "predicted");
        json set_json = json::object();
        for (const auto& m : results) {
            set_json[m.name] = mode_json(m, plain_rate);
            std::printf("%-28s %10.1f %8.2f %7.2f %7s %9.2f %8d %10.1f\n", m.name.c_str(), m.tokens_per_s,
                        plain_rate > 0 ? m.tokens_per_s / plain_rate : 0.0, m.total.tokens_per_step(),
                        m.total.drafted ? std::to_string(m.total.acceptance()).substr(0, 5).c_str() : "-",
                        m.total.submits_per_step(), m.total.steps,
                        m.predicted_verify_ms > 0 ? m.first_run_tokens * 1000.0 / m.predicted_verify_ms : 0.0);
        }
        print_depth_acceptance(results);
        out["prompt_sets"][set_name] = set_json;
    }
    return out;
}

json bench_verify_latency(GpuModel& model, int position, int runs, int max_block) {
    json out = json::array();
    std::printf("verify forward latency by block size at cache position %d:", position);
    for (int n : {1, 2, 4, 8, 16, 32, 64, 128}) {
        if (position + n > model.config().seq_len || n > max_block) break;
        std::vector<int> tokens(n);
        for (int i = 0; i < n; ++i) tokens[i] = (i * 31 + 7) % model.config().vocab_size;
        TokenBlock block = TokenBlock::causal(position, tokens);
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

json forward_ratios(const json& latency) {
    json out = json::object();
    if (latency.empty() || latency[0]["tokens"] != 1) return out;
    const double one = latency[0]["ms"].get<double>();
    for (const json& row : latency)
        if (one > 0) out[std::to_string(row["tokens"].get<int>())] = row["ms"].get<double>() / one;
    return out;
}

}  // namespace medusa::cli
