#include "setup/cost_measurement.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "setup/cost_cache.h"
#include "setup/trained_files.h"
#include "llm/kernel_tuning.h"

namespace medusa {

using nlohmann::json;

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

std::string cost_model_path() {
    const std::string dir = default_cache_dir();
    return dir.empty() ? "" : dir + "/cost-model.json";
}

std::string cost_device_key(const DraftingTarget& target) {
    return target.gpu ? tuning_device_key(*target.gpu) : std::string("cpu reference");
}

std::string cost_model_key(const DraftingTarget& target) {
    return tuning_model_key(target.file);
}

CostModel measure_costs(TreeRunner& runner, int max_tokens, const Progress& progress) {
    const int ctx = runner.config().seq_len;
    max_tokens = std::clamp(max_tokens, 1, std::min(TokenBlock::kMaxTokens, ctx));
    const int position = std::clamp(ctx / 4, 0, ctx - max_tokens);
    std::vector<int> sizes;
    for (int n : {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128})
        if (n <= max_tokens) sizes.push_back(n);
    if (sizes.back() != max_tokens) sizes.push_back(max_tokens);
    // Rounds over every size, so that whatever else the machine does spreads over all of them;
    // the lower quartile of each, since other work only ever adds time.
    std::vector<std::vector<double>> ms(sizes.size());
    std::vector<TokenBlock> blocks;
    for (int n : sizes) {
        std::vector<int> tokens(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) tokens[i] = (i * 31 + 7) % runner.config().vocab_size;
        blocks.push_back(TokenBlock::causal(position, tokens));
        runner.prepare(n, nullptr);
        runner.run(blocks.back(), {.stage = nullptr, .stats = n > 1, .temperature = 1.0f});  // warms up
    }
    double spent = 0;
    for (int round = 0; round < 12 && (round < 3 || spent < 1500.0); ++round) {
        if (progress) progress("measuring the verify pass for the step controller: round " + std::to_string(round + 1));
        for (size_t i = 0; i < sizes.size(); ++i) {
            // Two passes back to back, the second timed: decoding repeats one size step after
            // step, with its data warm, where the pass before this one was another size.
            for (int pass = 0; pass < 2; ++pass) {
                const auto t0 = Clock::now();
                runner.run(blocks[i], {.stage = nullptr, .stats = sizes[i] > 1, .temperature = 1.0f});
                (void)runner.argmax(0);  // the results read back, as a step reads them
                const double t = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
                if (pass == 1) ms[i].push_back(t);
                spent += t;
            }
        }
    }
    std::vector<std::pair<int, double>> points;
    for (size_t i = 0; i < sizes.size(); ++i) {
        std::sort(ms[i].begin(), ms[i].end());
        // A larger block never costs less: what looks cheaper is noise, so hold the curve level.
        const double t = std::max(1e-3, ms[i][ms[i].size() / 4]);
        points.push_back({sizes[i], points.empty() ? t : std::max(t, points.back().second)});
    }
    CostModel m;
    m.verify = CostCurve(std::move(points));
    m.position = position;
    m.source = "measured";
    return m;
}

namespace {

template <class F>
double lower_quartile_ms(F&& run) {
    run();  // warms up
    std::vector<double> ms;
    for (int r = 0; r < 8; ++r) {
        const auto t0 = Clock::now();
        run();
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 4];
}

}  // namespace

double draft_level_ms(LanguageModel& draft) {
    const TokenBlock block = TokenBlock::causal(0, {1});
    draft.prepare(1);
    return lower_quartile_ms([&] {
        draft.forward(block);
        (void)draft.argmax(0);
    });
}

double eagle_level_ms(EagleRunner& eagle, int width) {
    width = std::clamp(width, 1, std::min(TokenBlock::kMaxTokens, eagle.context()));
    std::vector<int> tokens(static_cast<size_t>(width), 1), source;
    for (int i = 0; i < width; ++i) source.push_back(EagleRunner::target_slot(0));
    TokenBlock block = TokenBlock::causal(0, tokens);
    eagle.prepare(width);
    return lower_quartile_ms([&] {
        eagle.restart();
        eagle.run(block, source);
        (void)eagle.logits(0);
    });
}

double stage_ms(TreeRunner& runner, const DraftStage& stage, int tokens) {
    tokens = std::clamp(tokens, 1, stage.nodes());
    const TokenBlock block = TokenBlock::causal(0, std::vector<int>(static_cast<size_t>(tokens), 1));
    runner.prepare(tokens, &stage);
    runner.prepare(tokens, nullptr);
    const double without = lower_quartile_ms([&] { runner.run(block, {.stats = tokens > 1}); });
    // (the stage drafts from the hidden state of the runner's own last pass, just run)
    const double with = lower_quartile_ms([&] { runner.run(block, {.stage = &stage, .stats = tokens > 1}); });
    return std::max(0.0, with - without);
}

CostModel target_costs(const DraftingTarget& target, CostRefresh refresh, const Progress& progress) {
    CostCache cache(cost_model_path());
    const std::string device = cost_device_key(target), model = cost_model_key(target);
    if (refresh == CostRefresh::UseCache)
        if (const json* entry = cache.find(device, model)) return CostModel::from_json(*entry, cache.path());
    CostModel m = measure_costs(target.runner, TokenBlock::kMaxTokens / 2, progress);
    cache.put(device, model, m.to_json());
    return m;
}

double drafter_cost_ms(const DraftingTarget& target, const std::string& key, const std::function<double()>& measure,
                        CostRefresh refresh) {
    CostCache cache(cost_model_path());
    const std::string device = cost_device_key(target), entry_key = "drafter " + key;
    if (refresh == CostRefresh::UseCache)
        if (const json* entry = cache.find(device, entry_key)) return (*entry)["level_ms"].get<double>();
    const double ms = measure();
    cache.put(device, entry_key, json{{"level_ms", ms}});
    return ms;
}

}  // namespace medusa
