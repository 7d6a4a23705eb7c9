#include "bench_charts.h"

#include <algorithm>
#include <stdexcept>

#include "model/json_file.h"

namespace medusa::charts {

namespace {

using json = nlohmann::json;

double number_at(const json& j, const char* key) {
    return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0 / 0.0;
}

// Plain decoding first, then the drafters from the most to the least machinery; JSON objects
// come back sorted by name, which would put "ar" wherever the alphabet puts it.
int mode_rank(const std::string& key) {
    static const char* order[] = {"ar", "medusa", "eagle", "draft:", "draft-tree:", "ngram"};
    for (int i = 0; i < 6; ++i)
        if (key.rfind(order[i], 0) == 0) return i;
    return 6;
}

// Story prompts first: the set every mode runs; "retell" only comes with n-gram lookup.
std::vector<std::string> prompt_set_order(const json& sets) {
    std::vector<std::string> names;
    for (const auto& [name, rows] : sets.items()) names.push_back(name);
    std::stable_sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return (a == "stories") > (b == "stories"); });
    return names;
}

}  // namespace

std::string mode_label(const std::string& key) {
    if (key == "ar") return "plain";
    if (key == "medusa") return "Medusa";
    if (key == "eagle") return "EAGLE";
    if (key == "ngram") return "n-gram";
    const size_t colon = key.find(':');
    if (colon == std::string::npos) return key;
    // Draft models: the mode and the file's distinguishing part (stories260K_q80.bin -> q80).
    std::string file = key.substr(colon + 1);
    file = file.substr(0, file.find('.'));
    const size_t us = file.find_last_of('_');
    if (us != std::string::npos) file = file.substr(us + 1);
    return (key.compare(0, colon, "draft-tree") == 0 ? "draft tree " : "draft ") + file;
}

std::vector<Chart> bench_charts(const json& bench) {
    std::vector<Chart> charts;
    if (bench.contains("compare") && bench["compare"].contains("prompt_sets")) {
        const json& sets = bench["compare"]["prompt_sets"];
        // Every mode any prompt set ran; a set without a mode leaves a gap.
        std::vector<std::string> modes;
        for (const auto& [set, rows] : sets.items())
            for (const auto& [mode, row] : rows.items())
                if (std::find(modes.begin(), modes.end(), mode) == modes.end()) modes.push_back(mode);
        std::stable_sort(modes.begin(), modes.end(), [](const auto& a, const auto& b) { return mode_rank(a) < mode_rank(b); });
        Chart speed, tau;
        speed.title = "Decoding speed by mode";
        speed.y_title = "tokens/s";
        speed.x_title = "decoding mode";
        tau.title = "Tokens per target forward (tau)";
        tau.y_title = "tokens per verify pass";
        tau.x_title = "decoding mode";
        tau.reference = 1;
        tau.reference_label = "plain decoding: 1";
        for (const auto& m : modes) {
            speed.labels.push_back(mode_label(m));
            tau.labels.push_back(mode_label(m));
        }
        for (const std::string& set : prompt_set_order(sets)) {
            const json& rows = sets[set];
            ChartSeries s{set + " prompts", {}}, t{set + " prompts", {}};
            for (const auto& m : modes) {
                s.values.push_back(rows.contains(m) ? number_at(rows[m], "tokens_per_s") : 0.0 / 0.0);
                t.values.push_back(rows.contains(m) ? number_at(rows[m], "tau") : 0.0 / 0.0);
            }
            if (set == "stories" && rows.contains("ar")) {
                speed.reference = number_at(rows["ar"], "tokens_per_s");
                speed.reference_label = "plain decoding";
            }
            speed.series.push_back(std::move(s));
            tau.series.push_back(std::move(t));
        }
        const int n_runs = bench["compare"].value("runs", 0);
        const std::string runs = n_runs > 1 ? ", median of " + std::to_string(n_runs) + " runs" : n_runs == 1 ? ", one run" : "";
        speed.note = "greedy, " + std::to_string(bench["compare"].value("new_tokens_per_prompt", 0)) +
                     " new tokens per prompt" + runs;
        tau.note = "higher: more tokens kept from each forward pass of the model";
        charts.push_back(std::move(speed));
        charts.push_back(std::move(tau));
    }
    if (bench.contains("vulkan") && bench["vulkan"].contains("verify_latency_ms")) {
        const json& rows = bench["vulkan"]["verify_latency_ms"];
        double one = 0;
        for (const auto& r : rows)
            if (r.value("tokens", 0) == 1) one = number_at(r, "ms");
        if (one > 0) {
            Chart cost;
            cost.kind = Chart::Kind::Lines;
            cost.title = "Cost of one forward over T tokens";
            cost.y_title = "forward(T) / forward(1)";
            cost.x_title = "tokens in the block (T, log scale)";
            cost.log_x = true;
            ChartSeries s{"forward(T) / forward(1)", {}};
            for (const auto& r : rows) {
                cost.x.push_back(r.value("tokens", 0));
                cost.labels.push_back(std::to_string(r.value("tokens", 0)));
                s.values.push_back(number_at(r, "ms") / one);
            }
            cost.series.push_back(std::move(s));
            cost.reference = 1;
            cost.reference_label = "one token";
            cost.note = "near 1: verifying a tree costs what one token costs";
            charts.push_back(std::move(cost));
        }
    }
    return charts;
}

std::vector<Chart> tree_budget_charts(const json& tree) {
    std::vector<Chart> charts;
    if (!tree.contains("table") || !tree["table"].is_array() || tree["table"].empty()) return charts;
    const int chosen = tree.value("nodes", 0);
    Chart per_step, step_ms, rate;
    for (Chart* c : {&per_step, &step_ms, &rate}) {
        c->kind = Chart::Kind::Lines;
        c->x_title = "tree nodes (budget, log scale)";
        c->log_x = true;
    }
    per_step.title = "Expected tokens per step";
    per_step.y_title = "tokens per step (from head accuracies)";
    step_ms.title = "Measured step time";
    step_ms.y_title = "ms per step";
    rate.title = "Expected speed by tree budget";
    rate.y_title = "tokens/s = tokens per step / step time";
    ChartSeries a{"tokens per step", {}}, b{"ms", {}}, r{"tokens/s", {}};
    for (const auto& row : tree["table"]) {
        const int nodes = row.value("nodes", 0);
        for (Chart* c : {&per_step, &step_ms, &rate}) {
            if (nodes == chosen) c->highlight = int(c->labels.size());
            c->x.push_back(nodes);
            c->labels.push_back(std::to_string(nodes));
        }
        a.values.push_back(number_at(row, "expected_tokens_per_step"));
        b.values.push_back(number_at(row, "step_ms"));
        r.values.push_back(number_at(row, "expected_tokens_per_s"));
    }
    per_step.series.push_back(std::move(a));
    step_ms.series.push_back(std::move(b));
    rate.series.push_back(std::move(r));
    rate.note = "marked: the budget tune-tree chose (" + std::to_string(chosen) + " nodes)";
    charts.push_back(std::move(rate));
    charts.push_back(std::move(per_step));
    charts.push_back(std::move(step_ms));
    return charts;
}

std::vector<Chart> charts_from_json(const json& j, const std::string& source) {
    if (j.is_object() && j.contains("table") && j.contains("medusa_choices")) return tree_budget_charts(j);
    if (j.is_object() && (j.contains("compare") || j.contains("vulkan"))) {
        std::vector<Chart> c = bench_charts(j);
        if (c.empty()) throw std::runtime_error(source + ": a bench result with nothing to chart (no modes compared, no block latencies)");
        return c;
    }
    throw std::runtime_error(source + ": neither `medusa bench --json` output nor a tune-tree tree.json with its table");
}

std::vector<Chart> charts_from_file(const std::string& path) {
    return charts_from_json(read_json_file(path), path);  // regular, bounded, shallow
}

}  // namespace medusa::charts
