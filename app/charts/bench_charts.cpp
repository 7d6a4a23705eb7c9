#include "bench_charts.h"

#include <algorithm>
#include <climits>
#include <optional>
#include <set>
#include <stdexcept>

#include "bench_mode.h"
#include "model/json_file.h"
#include "model/model_file.h"  // FormatError

namespace medusa::charts {

namespace {

using json = nlohmann::json;

// Files are read as untrusted: a value of the wrong type is a gap in the chart, not an exception.
double number_at(const json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0 / 0.0;
}

// j[key] where j is an object holding it, else null.
const json& member(const json& j, const std::string& key) {
    static const json kNull;
    return j.is_object() && j.contains(key) ? j[key] : kNull;
}

// A count (tokens, nodes, runs): a whole number from 0 to INT_MAX, else nothing.
std::optional<int> count_at(const json& j, const char* key) {
    if (!j.is_object() || !j.contains(key)) return std::nullopt;
    const json& v = j[key];
    if (v.is_number_unsigned()) return v.get<uint64_t>() <= uint64_t(INT_MAX) ? std::optional<int>(int(v.get<uint64_t>())) : std::nullopt;
    if (v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() <= INT_MAX) return int(v.get<int64_t>());
    return std::nullopt;  // floats too: 1e300 has no int
}

// More bars than this would not be read as a chart (a real benchmark compares a handful of modes
// on two or three prompt sets); a file asking for more is refused rather than drawn.
constexpr size_t kMaxModes = 64, kMaxPromptSets = 16;

// In bench_mode_rank's order, keys the charts do not know last; JSON objects come back sorted by
// name, which would put plain decoding wherever the alphabet puts it.
int mode_rank(const std::string& key) {
    const std::optional<BenchMode> m = parse_bench_mode_key(key);
    return m ? bench_mode_rank(*m) : INT_MAX;
}

// Plain decoding's row of a prompt set, under the key of either spelling ("plain", "ar").
const json& plain_row(const json& rows) {
    static const json kNull;
    if (rows.is_object())
        for (const auto& [key, row] : rows.items())
            if (parse_bench_mode_key(key) == BenchMode{.kind = DrafterKind::Plain}) return row;
    return kNull;
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
    const std::optional<BenchMode> m = parse_bench_mode_key(key);
    return m ? bench_mode_label(*m) : key;
}

namespace {

// Every mode any prompt set ran, in mode_rank's order; a set without a mode leaves a gap. Throws
// for more prompt sets or modes than a chart shows.
std::vector<std::string> compared_modes(const json& sets) {
    if (sets.size() > kMaxPromptSets)
        throw std::runtime_error(std::to_string(sets.size()) + " prompt sets to chart (a chart shows at most " +
                                 std::to_string(kMaxPromptSets) + ")");
    std::set<std::string> seen;
    for (const auto& [set, rows] : sets.items())
        if (rows.is_object())
            for (const auto& [mode, row] : rows.items()) {
                seen.insert(mode);
                if (seen.size() > kMaxModes)
                    throw std::runtime_error("more than " + std::to_string(kMaxModes) +
                                             " decoding modes to chart (a chart shows at most " +
                                             std::to_string(kMaxModes) + ")");
            }
    std::vector<std::string> modes(seen.begin(), seen.end());
    std::stable_sort(modes.begin(), modes.end(), [](const auto& a, const auto& b) { return mode_rank(a) < mode_rank(b); });
    return modes;
}

// bench --compare's speed and tau by mode, a series per prompt set.
void add_compare_charts(const json& compare, const json& sets, std::vector<Chart>& charts) {
    const std::vector<std::string> modes = compared_modes(sets);
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
            s.values.push_back(number_at(member(rows, m), "tokens_per_s"));
            t.values.push_back(number_at(member(rows, m), "tau"));
        }
        if (const json& plain = plain_row(rows); set == "stories" && !plain.is_null()) {
            speed.reference = number_at(plain, "tokens_per_s");
            speed.reference_label = "plain decoding";
        }
        speed.series.push_back(std::move(s));
        tau.series.push_back(std::move(t));
    }
    const int n_runs = count_at(compare, "runs").value_or(0);
    const std::string runs = n_runs > 1 ? ", median of " + std::to_string(n_runs) + " runs" : n_runs == 1 ? ", one run" : "";
    speed.note = "greedy, " + std::to_string(count_at(compare, "new_tokens_per_prompt").value_or(0)) +
                 " new tokens per prompt" + runs;
    tau.note = "higher: more tokens kept from each forward pass of the model";
    charts.push_back(std::move(speed));
    charts.push_back(std::move(tau));
}

// The cost of one forward over T tokens against one token's, where the file measured one token.
void add_latency_chart(const json& rows, std::vector<Chart>& charts) {
    double one = 0;
    for (const auto& r : rows)
        if (count_at(r, "tokens") == 1) one = number_at(r, "ms");
    if (!(one > 0)) return;  // none measured (NaN) or nonsense
    Chart cost;
    cost.kind = Chart::Kind::Lines;
    cost.title = "Cost of one forward over T tokens";
    cost.y_title = "forward(T) / forward(1)";
    cost.x_title = "tokens in the block (T, log scale)";
    cost.log_x = true;
    ChartSeries s{"forward(T) / forward(1)", {}};
    for (const auto& r : rows) {
        const std::optional<int> tokens = count_at(r, "tokens");
        if (!tokens) continue;
        cost.x.push_back(*tokens);
        cost.labels.push_back(std::to_string(*tokens));
        s.values.push_back(number_at(r, "ms") / one);
    }
    cost.series.push_back(std::move(s));
    cost.reference = 1;
    cost.reference_label = "one token";
    cost.note = "near 1: verifying a tree costs what one token costs";
    charts.push_back(std::move(cost));
}

}  // namespace

std::vector<Chart> bench_charts(const json& bench) {
    std::vector<Chart> charts;
    const json& compare = member(bench, "compare");
    if (const json& sets = member(compare, "prompt_sets"); sets.is_object()) add_compare_charts(compare, sets, charts);
    if (const json& rows = member(member(bench, "vulkan"), "verify_latency_ms"); rows.is_array())
        add_latency_chart(rows, charts);
    return charts;
}

std::vector<Chart> tree_budget_charts(const json& tree) {
    std::vector<Chart> charts;
    const json& table = member(tree, "table");
    if (!table.is_array() || table.empty()) return charts;
    const int chosen = count_at(tree, "nodes").value_or(0);
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
    for (const auto& row : table) {
        const std::optional<int> counted = count_at(row, "nodes");
        if (!counted) continue;
        const int nodes = *counted;
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
    try {
        if (j.is_object() && j.contains("table") && j.contains("medusa_choices")) {
            std::vector<Chart> c = tree_budget_charts(j);
            if (c.empty()) throw std::runtime_error("a tuned tree with nothing to chart (no budgets in its table)");
            return c;
        }
        if (j.is_object() && (j.contains("compare") || j.contains("vulkan"))) {
            std::vector<Chart> c = bench_charts(j);
            if (c.empty()) throw std::runtime_error("a bench result with nothing to chart (no modes compared, no block latencies)");
            return c;
        }
    } catch (const std::exception& e) {
        throw FormatError(source + ": " + e.what());
    }
    throw FormatError(source + ": neither `medusa bench --json` output nor a tune-tree tree.json with its table");
}

std::vector<Chart> charts_from_file(const std::string& path) {
    return charts_from_json(read_json_file(path), path);  // regular, bounded, shallow
}

}  // namespace medusa::charts
