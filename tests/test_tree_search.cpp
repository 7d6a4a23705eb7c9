// The greedy sparse-tree search against a case worked out by hand, and the budget choice.
#include <catch2/catch.hpp>

#include "decode/tree_search.h"

using namespace medusa;

TEST_CASE("greedy tree search reproduces a hand-computed tree for three heads", "[tree-search]") {
    // Made-up top-i accuracies of three heads.
    const HeadRankAccuracy a = {{0.7, 0.2, 0.05}, {0.6, 0.25}, {0.5, 0.1}};
    // By hand: each step takes the best child of the tree so far.
    //   [0] .7 | [0,0] .42 | [0,0,0] .21 | [1] .2 | [0,1] .175 | [1,0] .12 | [0,1,0] .0875 | [1,0,0] .06
    const GreedyTree t = greedy_tree_search(a, 9);
    const std::vector<std::vector<int>> want = {{0}, {0, 0}, {0, 0, 0}, {1}, {0, 1}, {1, 0}, {0, 1, 0}, {1, 0, 0}};
    CHECK(t.choices == want);
    const std::vector<double> values = {0.7, 0.42, 0.21, 0.2, 0.175, 0.12, 0.0875, 0.06};
    REQUIRE(t.path_value.size() == values.size());
    for (size_t i = 0; i < values.size(); ++i) CHECK(t.path_value[i] == Approx(values[i]).epsilon(1e-12));
    CHECK(t.expected_accept(0) == 0);
    CHECK(t.expected_accept(3) == Approx(1.33));
    CHECK(t.expected_accept(8) == Approx(1.9725));
    // Depth is bounded by the number of heads and by max_depth.
    const GreedyTree shallow = greedy_tree_search(a, 5, 1);
    CHECK(shallow.choices == std::vector<std::vector<int>>{{0}, {1}, {2}});  // rank 3+ has accuracy 0
    // The tree is valid for the decoder.
    CHECK(make_tree(t.choices).num_nodes() == 9);
}

TEST_CASE("the budget with the most expected tokens per second is chosen", "[tree-search]") {
    std::vector<BudgetRow> rows = {{1, 1.0, 10.0}, {2, 1.7, 10.5}, {3, 2.1, 13.0}, {4, 2.3, 12.0}};
    monotone_step_times(rows);
    CHECK(rows[2].step_ms == 12.0);  // the noisy 13 ms becomes the larger budget's 12 ms
    CHECK(best_budget(rows) == 3);   // 2.3/12 > 2.1/12 > 1.7/10.5 > 1/10
    rows[3].step_ms = 40;
    rows[2].step_ms = 30;
    CHECK(best_budget(rows) == 1);
}
