// Classic draft-model speculation (Leviathan et al.; SpecInfer for trees): a small model with
// the target's tokenizer drafts `gamma` levels ahead, one forward per level. With one branch it
// drafts a chain; with K branches every expanded node gets K children (its top-K, or K draws
// without replacement from q when the rule samples) and the K most likely nodes of each level
// are expanded further. q is shaped exactly as the target's p (temperature, top-k, top-p,
// penalty), which lossless verification needs.
#pragma once
#include <cstdint>

#include "decode/drafter.h"
#include "llm/language_model.h"

namespace medusa {

struct DraftModelOptions {
    int gamma = 4;                // levels drafted per step (the start value when adaptive)
    int branches = 1;             // children per expanded node: 1 is a chain
    bool adaptive_gamma = false;  // +1 after a fully accepted step, -1 when less than half was
    int min_gamma = 1, max_gamma = 16;
};

// Throws std::invalid_argument naming both models unless the draft's vocabulary matches.
void check_draft_compatible(const LlamaConfig& target, const LlamaConfig& draft, const std::string& target_name,
                            const std::string& draft_name);
// Loads a draft model for `target`: the same vocabulary size, and the same embedded tokenizer
// when both files carry one; throws std::invalid_argument naming both files otherwise.
ModelFile load_draft_model(const std::string& path, const ModelFile& target);

class DraftModelDrafter : public Drafter {
public:
    DraftModelDrafter(LanguageModel& draft, DraftModelOptions options);
    DrafterKind kind() const override { return DrafterKind::DraftModel; }
    void begin(std::span<const int> prompt) override;
    CandidateTree propose(const DraftContext& c) override;
    void verified(const VerifiedStep& step) override;
    uint64_t submits() const override { return forwards_; }
    int gamma() const { return gamma_; }  // the current (adaptive) depth
    std::vector<PreparedBlock> blocks_to_prepare() const override;
    int depth_limit() const override { return options_.adaptive_gamma ? options_.max_gamma : gamma_; }

private:
    // Feeds the draft the sequence up to and including the root it has not seen; returns the
    // root's row in the last block.
    int catch_up(std::span<const int> sequence, int base);
    void forward(const TokenBlock& block);
    // Children of `node` drawn from (or the top of) q, which is also recorded for the rule.
    void expand(CandidateTree& t, int node, std::vector<float> q, const DraftContext& c, int max_children);
    CandidateTree draft_chain(const DraftContext& c, int depth, int row);
    CandidateTree draft_tree(const DraftContext& c, int depth, int row);

    LanguageModel& draft_;
    DraftModelOptions options_;
    int gamma_;
    int valid_ = 0;         // the draft's cache holds the sequence's first valid_ tokens
    int chain_slots_ = 0;   // chain drafts the last proposal put in the cache after its root
    int last_base_ = 0, last_depth_ = 0;
    bool last_was_chain_ = false;
    uint64_t forwards_ = 0;
};

}  // namespace medusa
