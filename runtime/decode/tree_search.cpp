#include "decode/tree_search.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "model/json_file.h"

namespace medusa {

double GreedyTree::expected_accept(int n) const {
    double s = 0;
    for (int i = 0; i < n && i < int(path_value.size()); ++i) s += path_value[i];
    return s;
}

GreedyTree greedy_tree_search(const HeadRankAccuracy& a, int max_nodes, int max_depth, int topk) {
    const int depth_limit = std::min<int>(max_depth, int(a.size()));
    struct Candidate {
        std::vector<int> path;
        double value;
    };
    auto better = [](const Candidate& x, const Candidate& y) {
        if (x.value != y.value) return x.value > y.value;
        if (x.path.size() != y.path.size()) return x.path.size() < y.path.size();
        return x.path < y.path;
    };
    std::vector<Candidate> open;
    auto add_children = [&](const std::vector<int>& parent, double value) {
        const size_t d = parent.size();
        if (int(d) >= depth_limit) return;
        for (int i = 0; i < topk && i < int(a[d].size()); ++i) {
            std::vector<int> child = parent;
            child.push_back(i);
            open.push_back({std::move(child), value * a[d][i]});
        }
    };
    GreedyTree t;
    add_children({}, 1.0);
    while (int(t.choices.size()) + 1 < max_nodes && !open.empty()) {
        auto best = std::min_element(open.begin(), open.end(), better);
        Candidate c = std::move(*best);
        open.erase(best);
        if (c.value <= 0) break;  // nothing left that could ever be accepted
        add_children(c.path, c.value);
        t.choices.push_back(std::move(c.path));
        t.path_value.push_back(c.value);
    }
    return t;
}

int best_budget(const std::vector<BudgetRow>& rows) {
    int best = 0;
    for (int i = 1; i < int(rows.size()); ++i)
        if (rows[i].tokens_per_s() > rows[best].tokens_per_s()) best = i;
    return best;
}

void monotone_step_times(std::vector<BudgetRow>& rows) {
    for (int i = int(rows.size()) - 2; i >= 0; --i) rows[i].step_ms = std::min(rows[i].step_ms, rows[i + 1].step_ms);
}

std::string tree_search_json(const GreedyTree& tree, const std::vector<BudgetRow>& rows, int chosen,
                             const HeadRankAccuracy& accuracy, const std::string& device) {
    using nlohmann::json;
    const BudgetRow& r = rows.at(chosen);
    const std::vector<std::vector<int>> choices(tree.choices.begin(), tree.choices.begin() + (r.nodes - 1));
    json table = json::array();
    for (const auto& row : rows)
        table.push_back({{"nodes", row.nodes},
                         {"expected_tokens_per_step", row.expected_tokens},
                         {"step_ms", row.step_ms},
                         {"expected_tokens_per_s", row.tokens_per_s()}});
    json j = {{"medusa_choices", choices},
              {"nodes", r.nodes},
              {"expected_tokens_per_step", r.expected_tokens},
              {"step_ms", r.step_ms},
              {"expected_tokens_per_s", r.tokens_per_s()},
              {"device", device},
              {"head_rank_accuracy", accuracy},
              {"table", table}};
    return json_text(j, 1);
}

std::string tree_search_table(const std::vector<BudgetRow>& rows, int chosen) {
    std::string out = "nodes  expected tokens/step  step ms  expected tokens/s\n";
    char b[128];
    for (int i = 0; i < int(rows.size()); ++i) {
        std::snprintf(b, sizeof b, "%5d  %20.3f  %7.3f  %17.1f%s\n", rows[i].nodes, rows[i].expected_tokens,
                      rows[i].step_ms, rows[i].tokens_per_s(), i == chosen ? "  <- chosen" : "");
        out += b;
    }
    return out;
}

}  // namespace medusa
