// The arithmetic of shaping a step, apart from any drafter: a step that verifies T tokens costs
// what drafting took plus the verify pass of T, and is expected to emit 1 + (the summed chance
// that each drafted node is on the accepted path) tokens. The shape with the most expected tokens
// per millisecond wins, down to the root alone: plain decoding.
#pragma once
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "decode/decoding_kinds.h"

namespace medusa {

// One shape a step could take, as the controller weighed it.
struct ShapeOption {
    DrafterKind drafter = DrafterKind::Plain;
    int nodes = 1;                 // the verified block, root included
    int depth = 0;                 // levels drafted
    double expected_tokens = 1.0;  // emitted by the step
    double expected_ms = 0.0;      // drafting and verifying
    double tokens_per_ms() const { return expected_ms > 0 ? expected_tokens / expected_ms : 0.0; }
};

enum class ControlReason {
    Pays,         // the chosen shape had the most expected tokens per ms
    Explore,      // a drafter not tried for a while drafts its smallest shape, to see if it pays now
    NothingPays,  // no drafted shape was expected to beat plain decoding
    NothingDrafted,  // no drafter had anything to propose (no match, no hidden state yet, no room)
    // Plain decoding was expected to pay best, but the drafter may not be dropped (ControlOptions::
    // always_draft): the best drafted shape instead.
    DraftedAnyway,
};
const char* control_reason_name(ControlReason r);

// What the controller weighed before a step and what it chose (trace files, the app).
struct ControlTrace {
    std::vector<ShapeOption> weighed;  // [0] is plain decoding
    int chosen = 0;
    ControlReason reason = ControlReason::NothingDrafted;
    const ShapeOption& choice() const { return weighed[size_t(chosen)]; }
};

// The block sizes a controlled step verifies: every size up to 10, then coarser, so that the
// command buffers of all of them can be recorded before the first token.
std::vector<int> shape_sizes(int max_tokens);

using VerifyCost = std::function<double(int tokens)>;

// The best prefix of a drafted tree: `path_prob[i]` is the chance node i is on the accepted path
// (path_prob[0] = 1, never more than its parent's). With `any_subtree`, the likeliest nodes are
// kept whatever their order (greedy verification of host-drafted tokens); else a prefix in node
// order (device-drafted tokens and sampled drafts). Returns the kept nodes, root first, in order:
// the best shape that drafts something (the root alone only for a tree of one node).
struct TreePlan {
    std::vector<int> kept;
    double expected_tokens = 1.0;
    double expected_ms = 0.0;
};
TreePlan plan_tree(std::span<const int> parent, std::span<const double> path_prob, bool any_subtree,
                   const VerifyCost& verify_ms, double draft_ms);

// The best depth of a proposal drafted a level at a time, each level costing `level_ms`, where
// `level_accept[d - 1]` is the chance the path goes from depth d - 1 to d: the best depth of at
// least 1 (0 only when max_depth is 0).
ShapeOption plan_levels(DrafterKind drafter, std::span<const double> level_accept, double level_ms,
                        const VerifyCost& verify_ms, int max_depth);

}  // namespace medusa
