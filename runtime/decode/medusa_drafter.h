// Medusa: K heads on the target's last hidden state guess the next K tokens; each head's top-k
// guesses fill a fixed sparse tree (medusa_choices). The heads run on the target's engine as a
// drafting stage inside the verify pass (one submit per step on the GPU), so the CPU knows the
// tree's shape but not its tokens until the pass is done. The first step of a generation has no
// hidden state yet and verifies the root alone; near the end of the context (or of the token
// budget) the tree shrinks to the nodes that fit, down to the root.
#pragma once
#include <memory>

#include "decode/drafter.h"
#include "decode/tree.h"
#include "llm/medusa_heads.h"
#include "llm/tree_runner.h"

namespace medusa {

class MedusaDrafter : public Drafter {
public:
    // `heads` may be empty only for a one-node tree; throws std::invalid_argument when the tree
    // is deeper than the heads or too large for one verify pass.
    MedusaDrafter(TreeRunner& runner, const ModelFile& file, const MedusaHeads& heads, const TreeBuffers& tree);
    DrafterKind kind() const override { return DrafterKind::Medusa; }
    void begin(std::span<const int>) override { has_hidden_ = false; }
    CandidateTree propose(const DraftContext& c) override;
    const DraftStage* device_stage() const override { return stage_.get(); }
    void verified(const VerifiedStep&) override { has_hidden_ = true; }
    const TreeBuffers& tree() const { return tree_; }
    std::vector<PreparedBlock> blocks_to_prepare() const override;
    bool cheap_proposal() const override { return true; }
    int depth_limit() const override { return tree_.max_depth; }
    AcceptanceEvidence evidence() const override { return AcceptanceEvidence::Rank; }
    int evidence_of(const CandidateTree& t, int node) const override { return t.rank[size_t(node)]; }

private:
    TreeBuffers tree_;
    CandidateTree shape_;  // the full tree, tokens unknown
    std::unique_ptr<DraftStage> stage_;
    bool has_hidden_ = false;
};

}  // namespace medusa
