// The one verifier every decoding mode shares: it runs a drafter's candidate tree through the
// target in one forward pass, applies the acceptance rule, keeps the accepted path in the KV
// cache and returns what it accepted. It owns the position in the cache (the root's slot).
#pragma once
#include <span>

#include "decode/acceptance.h"
#include "decode/candidate_tree.h"
#include "decode/verified_step.h"
#include "llm/draft_stage.h"
#include "llm/tree_runner.h"

namespace medusa {

class Verifier {
public:
    Verifier(TreeRunner& runner, AcceptanceRule& rule) : runner_(&runner), rule_(&rule) {}
    void set_rule(AcceptanceRule& rule) { rule_ = &rule; }
    // Each step's emitted tokens get their log-probabilities and the `top` likeliest; -1: none.
    void set_logprobs(int top) { logprobs_ = top; }

    // Puts prompt[0 .. n-1) in the cache, re-running only what the cache does not already hold;
    // the last prompt token becomes the first root. Throws std::invalid_argument for an empty
    // prompt or one longer than the context.
    void start(std::span<const int> prompt);
    int base() const { return base_; }  // cache slot of the current root
    int room() const { return runner_->config().seq_len - base_; }  // nodes a tree may hold

    // Verifies `tree` (its root must be sequence.back()); `stage` drafts a device_tokens tree,
    // whose tokens are then read from the pass. `sequence` is everything before and including
    // the root (the penalty's history).
    VerifiedStep step(const CandidateTree& tree, const DraftStage* stage, std::span<const int> sequence, Sampler& sampler);

private:
    TreeRunner* runner_;
    AcceptanceRule* rule_;
    int base_ = 0;
    int logprobs_ = -1;
};

}  // namespace medusa
