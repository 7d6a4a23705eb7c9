// What a drafter proposes for one speculative step: a tree of candidate tokens rooted at the
// last emitted token (not yet in the cache). Per node: its token, parent (parents come before
// children) and depth, and how its children were drafted, which the lossless acceptance rule
// needs: deterministically (top-k, a lookup: no randomness), or sampled one after another
// without replacement from a distribution q over the vocabulary. The verify block (positions
// and the attention mask of each node's ancestors) is derived here and nowhere else.
#pragma once
#include <vector>

#include "llm/token_block.h"

namespace medusa {

struct CandidateTree {
    std::vector<int> token;   // node 0: the root
    std::vector<int> parent;  // -1 for the root; parent[i] < i
    std::vector<int> depth;
    std::vector<int> rank;     // among its siblings, in the order they are tried
    std::vector<float> q;      // the drafter's probability of the node's token (1 at the root)
    // Per node: the distribution its children were drawn from, in sibling order and without
    // replacement; empty when they were chosen deterministically.
    std::vector<std::vector<float>> child_q;
    // The drafter's device stage writes tokens 1.. (and q) during the verify pass: the CPU
    // knows only the shape until the pass has run.
    bool device_tokens = false;

    static CandidateTree root_only(int root);
    int size() const { return int(token.size()); }
    int max_depth() const;
    // Appends a child of `parent`; returns its index.
    int add(int parent, int token, float q);
    // Children of every node, in the order they were added (the order they are tried in).
    std::vector<std::vector<int>> children() const;
    // Node i's ancestors and itself, root first.
    std::vector<int> path_to(int node) const;
    // The first n nodes (a valid tree, since parents come before children).
    CandidateTree prefix(int n) const;
    // The nodes listed (increasing, the root first, each node's parent among them), renumbered;
    // a node's rank becomes its place among the siblings kept.
    CandidateTree keep(const std::vector<int>& nodes) const;
    // The verify block at cache slot `base`: node i at position base + depth[i], seeing its
    // ancestors and itself.
    TokenBlock block(int base) const;
    // Throws std::invalid_argument when the parts disagree or a link is malformed.
    void validate(int vocab) const;
};

}  // namespace medusa
