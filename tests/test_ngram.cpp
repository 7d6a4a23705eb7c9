// n-gram (prompt lookup) drafting: what it proposes for a known sequence.
#include <catch2/catch.hpp>

#include "decode/ngram_drafter.h"

using namespace medusa;

namespace {

CandidateTree propose(NgramDrafter& d, const std::vector<int>& seq, int max_nodes = 64, int max_depth = 64) {
    Sampler s({0.0f, 1.0f, 0});
    DraftContext c;
    c.sequence = seq;
    c.base = int(seq.size()) - 1;
    c.max_nodes = max_nodes;
    c.max_depth = max_depth;
    c.sampler = &s;
    return d.propose(c);
}

std::vector<int> chain_tokens(const CandidateTree& t) {
    std::vector<int> out;
    for (int i = 1; i < t.size(); ++i) {
        CHECK(t.parent[i] == i - 1);
        out.push_back(t.token[i]);
    }
    return out;
}

}  // namespace

TEST_CASE("n-gram lookup proposes what followed the longest earlier match", "[ngram]") {
    NgramDrafter d({.max_tokens = 4, .max_match = 3});
    // "... 5 6 7 8 9 ..." earlier; the text now ends in "5 6 7": propose 8 9 10 11.
    const std::vector<int> seq = {1, 5, 6, 7, 8, 9, 10, 11, 12, 3, 4, 6, 7, 2, 5, 6, 7};
    const CandidateTree t = propose(d, seq);
    CHECK(t.token[0] == 7);
    CHECK(chain_tokens(t) == std::vector<int>{8, 9, 10, 11});
    for (int i = 1; i < t.size(); ++i) CHECK(t.child_q[i - 1].empty());  // deterministic drafts
}

TEST_CASE("n-gram lookup prefers the most recent of equal matches and falls back to shorter ones", "[ngram]") {
    NgramDrafter d({.max_tokens = 2, .max_match = 3});
    // "6 7" occurs twice before (followed by 8 and by 20); the suffix "9 6 7" occurs nowhere.
    const std::vector<int> seq = {6, 7, 8, 1, 6, 7, 20, 21, 9, 6, 7};
    CHECK(chain_tokens(propose(d, seq)) == std::vector<int>{20, 21});
}

TEST_CASE("n-gram branches form a trie of distinct continuations", "[ngram]") {
    NgramDrafter d({.max_tokens = 3, .max_match = 2, .branches = 3});
    const std::vector<int> seq = {4, 5, 10, 11, 4, 5, 10, 12, 4, 5, 30, 31, 4, 5};
    const CandidateTree t = propose(d, seq);
    // Continuations, most recent first: 30 31 4 | 10 12 4 | 10 11 4 -> a trie of 1 + 3 + 2 + 3 nodes.
    CHECK(t.size() == 9);
    const auto children = t.children();
    REQUIRE(children[0].size() == 2);
    CHECK(t.token[children[0][0]] == 30);
    CHECK(t.token[children[0][1]] == 10);
    CHECK(children[children[0][1]].size() == 2);  // 10 -> 12 and 10 -> 11
    CHECK(t.q[children[0][1]] == Approx(2.0 / 3.0));
}

TEST_CASE("n-gram drafts stay within the room and the depth they are given", "[ngram]") {
    NgramDrafter d({.max_tokens = 8, .max_match = 2, .branches = 2});
    const std::vector<int> seq = {1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2};
    CHECK(propose(d, seq, 3).size() == 3);
    CHECK(propose(d, seq, 64, 2).max_depth() == 2);
    CHECK(propose(d, seq, 1).size() == 1);
    CHECK(propose(d, {1, 2, 3, 4}).size() == 1);  // nothing repeats: the root alone
}
