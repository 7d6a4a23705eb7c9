// The candidate tree every drafter proposes: its verify block, prefixes and validation.
#include <catch2/catch.hpp>

#include "decode/candidate_tree.h"

using namespace medusa;

TEST_CASE("a candidate tree's block places each node at base + depth, seeing its ancestors only", "[tree]") {
    CandidateTree t = CandidateTree::root_only(7);
    const int a = t.add(0, 10, 0.5f), b = t.add(0, 11, 0.3f), c = t.add(a, 12, 0.9f), d = t.add(c, 13, 1.0f);
    CHECK(t.rank[b] == 1);
    CHECK(t.max_depth() == 3);
    const TokenBlock blk = t.block(40);
    CHECK(blk.tokens == std::vector<int>{7, 10, 11, 12, 13});
    CHECK(blk.positions == std::vector<int>{40, 41, 41, 42, 43});
    CHECK(blk.sees(d, c));
    CHECK(blk.sees(d, a));
    CHECK(blk.sees(d, 0));
    CHECK_FALSE(blk.sees(d, b));
    CHECK_FALSE(blk.sees(c, b));
    CHECK_FALSE(blk.sees(a, c));
    CHECK(t.path_to(d) == std::vector<int>{0, a, c, d});
    CHECK_FALSE(blk.is_causal());
    CHECK(t.prefix(3).size() == 3);
    CHECK(t.prefix(3).max_depth() == 1);
}

TEST_CASE("a chain of candidates is a causal block", "[tree]") {
    CandidateTree t = CandidateTree::root_only(1);
    for (int i = 0; i < 4; ++i) t.add(i, 20 + i, 1.0f);
    CHECK(t.block(5).is_causal());
}

TEST_CASE("malformed candidate trees are refused", "[tree]") {
    CandidateTree t = CandidateTree::root_only(3);
    t.add(0, 4, 1.0f);
    CHECK_NOTHROW(t.validate(10));
    CandidateTree bad_token = t;
    bad_token.token[1] = 10;
    CHECK_THROWS_WITH(bad_token.validate(10), Catch::Contains("outside the vocabulary"));
    CandidateTree bad_parent = t;
    bad_parent.parent[1] = 1;
    CHECK_THROWS_WITH(bad_parent.validate(10), Catch::Contains("before its parent"));
    CandidateTree bad_q = t;
    bad_q.child_q[0] = std::vector<float>(9, 0.1f);
    CHECK_THROWS_WITH(bad_q.validate(10), Catch::Contains("another vocabulary"));
    CHECK_THROWS(t.add(5, 1, 1.0f));
}
