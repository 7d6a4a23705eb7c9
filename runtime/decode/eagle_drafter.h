// EAGLE drafting: the draft layer reads the target's own features, so a level of the tree is one
// small forward. Before drafting, the layer catches up on the pairs (f_i, t_{i+1}) the target
// committed since last time (its true features, not predictions); the root's prediction then
// gives the first level, each expanded node's prediction its children (the draft's top-k), a
// level per forward, each level seeing its ancestors through the block window.
// - EAGLE-2 (dynamic): the top_k likeliest nodes of each level (by the draft's cumulative
//   probability) are expanded, and the `nodes` likeliest of all are verified.
// - EAGLE-1 (static): a fixed tree of rank paths (medusa_choices), every listed node drafted.
// Drafts are chosen deterministically, as EAGLE does; lossless sampling verifies them in the
// point-mass form, so every acceptance rule works. A node whose draft distribution is NaN (the
// layer's own overflow) gets no children: it is not the target's error.
#pragma once
#include <map>
#include <vector>

#include "decode/drafter.h"
#include "llm/eagle_runner.h"

namespace medusa {

struct EagleOptions {
    int top_k = 8;   // children per expanded node; EAGLE-2: also nodes expanded per level
    int depth = 6;   // the deepest level drafted (EAGLE-2: at most eagle_deepest_level(top_k))
    int nodes = 59;  // EAGLE-2: candidates kept for verification (the root not counted)
    std::vector<std::vector<int>> choices;  // EAGLE-1's fixed tree; empty: EAGLE-2's dynamic one
};

// The deepest level EAGLE-2's dynamic tree of `top_k` reaches: the run giving level d's tokens
// sees the d - 2 levels run before it, top_k slots each, through its block's window, which holds
// at most TokenBlock::kMaxTokens slots (a mask bit each). EAGLE-1's trees never reach the limit:
// what they run is at most the nodes they keep, fewer than a block holds.
int eagle_deepest_level(int top_k);

class EagleDrafter : public Drafter {
public:
    EagleDrafter(EagleRunner& runner, EagleOptions options);
    DrafterKind kind() const override { return DrafterKind::Eagle; }
    void before_prompt() override;
    void begin(std::span<const int> prompt) override;
    CandidateTree propose(const DraftContext& c) override;
    uint64_t submits() const override { return runner_.submits(); }
    std::vector<PreparedBlock> blocks_to_prepare() const override;
    int depth_limit() const override { return options_.depth; }

private:
    void prepare_runs();
    struct Candidate {
        int parent = -1;  // candidate index; -1 for the root
        int token = 0;
        float q = 1.0f;
        double score = 0;  // log of the draft's probability of the whole path
        int depth = 0;
        int row = -1;    // output row once run (its prediction feeds its children)
        int slot = -1;   // the layer's cache slot once run
    };
    // Runs the layer over the pairs the target committed since the last step; returns false when
    // there is nothing to draft from (no committed position yet).
    bool sync(const DraftContext& c);
    // Runs `level` (candidate indices) as one block after the slots used so far this step.
    bool run_level(const DraftContext& c, const std::vector<int>& level);
    // The `count` likeliest children of `parent`, which was token `t_in_run` of the last run.
    void children(const DraftContext& c, int parent, int t_in_run, int count, std::vector<int>* out);
    std::vector<int> draft_dynamic(const DraftContext& c, int room, int max_depth);
    std::vector<int> draft_static(const DraftContext& c, int room, int max_depth);
    CandidateTree build(const std::vector<int>& kept, int root_token) const;

    EagleRunner& runner_;
    EagleOptions options_;
    std::map<std::vector<int>, int> choice_index_;  // EAGLE-1: rank path -> its index in choices
    int synced_ = 0;  // the layer's cache holds the pairs of slots [0, synced_)
    int root_t_ = 0;  // the root's pair in the last catch-up run
    std::vector<Candidate> cand_;  // this step's: [0] the root, then every drafted token
    int next_slot_ = 0;            // the layer's next free cache slot this step
};

}  // namespace medusa
