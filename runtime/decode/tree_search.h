// Sparse Medusa trees from measured head accuracies (Medusa paper, appendix C), made
// hardware-aware: the greedy search gives the best tree for every node budget, the device's
// measured step time for each budget picks the one with the most expected tokens per second.
#pragma once
#include <string>
#include <vector>

#include "decode/tree.h"

namespace medusa {

// accuracy[k][i]: probability that head k's i-th ranked guess is the right token (i < 10).
using HeadRankAccuracy = std::vector<std::vector<double>>;

struct GreedyTree {
    std::vector<std::vector<int>> choices;  // in the order they were added (best first)
    std::vector<double> path_value;         // each choice's estimated acceptance: prod_j a_j^(i_j)
    // Expected accepted head tokens of the tree made of the root and the first n choices.
    double expected_accept(int n) const;
};

// Adds, node by node, the path whose estimated acceptance is highest among the children of
// paths already in the tree (so the tree stays connected); ties go to the shorter, then the
// lexicographically smaller path. max_nodes counts the root.
GreedyTree greedy_tree_search(const HeadRankAccuracy& accuracy, int max_nodes = kMaxTreeNodes,
                              int max_depth = kMaxTreeDepth, int topk = 10);

struct BudgetRow {
    int nodes = 1;                  // root included
    double expected_tokens = 1;     // expected accepted head tokens + the model's own token
    double step_ms = 0;             // measured on this device
    double tokens_per_s() const { return step_ms > 0 ? expected_tokens * 1000.0 / step_ms : 0; }
};

// The budget with the highest expected tokens per second (the first of equals).
int best_budget(const std::vector<BudgetRow>& rows);
// Costs never fall as the tree grows: each budget's time becomes the least time measured for it
// or any larger budget, which removes timing noise without hiding real steps.
void monotone_step_times(std::vector<BudgetRow>& rows);

// The medusa_choices file: the chosen tree, its measured table and the head accuracies.
std::string tree_search_json(const GreedyTree& tree, const std::vector<BudgetRow>& rows, int chosen,
                             const HeadRankAccuracy& accuracy, const std::string& device);
std::string tree_search_table(const std::vector<BudgetRow>& rows, int chosen);

}  // namespace medusa
