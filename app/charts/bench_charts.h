// The figures of a benchmark and of a tuned tree, as charts: from `medusa bench --json` output,
// tokens/s and tau per decoding mode and the cost of verifying T tokens against one; from
// `medusa tune-tree`'s tree.json, expected tokens per step, measured step time and expected
// tokens/s per node budget, with the budget it chose marked.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "chart.h"

namespace medusa::charts {

std::vector<Chart> bench_charts(const nlohmann::json& bench);
std::vector<Chart> tree_budget_charts(const nlohmann::json& tree);

// Either kind, told apart by their keys; throws FormatError naming `source` when it is neither or
// cannot be charted.
std::vector<Chart> charts_from_json(const nlohmann::json& j, const std::string& source);
std::vector<Chart> charts_from_file(const std::string& path);

// A short name for a bench mode key (bench_mode.h): "plain" or "ar" -> "plain", "eagle" -> "EAGLE",
// "draft:stories260K_q80.bin" -> "draft q80"; a key it does not know, as it is.
std::string mode_label(const std::string& key);

}  // namespace medusa::charts
