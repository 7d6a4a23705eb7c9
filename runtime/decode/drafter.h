// A drafter proposes the candidate tree of each speculative step; it never verifies. Plain
// decoding is the drafter that proposes nothing (a lone root); Medusa heads, a draft model,
// n-gram lookup and EAGLE's draft layer are the others. Each may keep state across steps and
// hears the verdict of each. runtime/decoding builds them from a DecodingSpec.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "decode/acceptance_model.h"
#include "decode/candidate_tree.h"
#include "decode/sampler.h"
#include "decode/decoding_kinds.h"
#include "decode/step_plan.h"
#include "decode/verified_step.h"
#include "llm/draft_stage.h"

namespace medusa {

struct DraftContext {
    std::span<const int> sequence;  // prompt and emitted tokens; the root is sequence.back()
    int base = 0;                   // cache slot of the root
    int max_nodes = 1;              // the tree may hold at most this many nodes, root included
    int max_depth = 0;              // and reach no deeper: more tokens than are still wanted is waste
    // The generation's one random stream, and the shaping (temperature, top-k, top-p, penalty)
    // that makes the target's p: sampled drafts draw q through the same shaping.
    Sampler* sampler = nullptr;
    bool sample_drafts = false;  // the rule is lossless sampling: draw drafts from q and report q
};

// A block size a drafter's steps may verify, with the stage that drafts it, recorded before the
// first token so that no step pays for building it.
struct PreparedBlock {
    int tokens = 1;
    const DraftStage* stage = nullptr;
};

class Drafter {
public:
    virtual ~Drafter() = default;
    virtual DrafterKind kind() const = 0;
    // Before the target reads a new prompt: a drafter that reads the target's features asks for
    // the ones it reads (another drafter on the same target may have asked for others).
    virtual void before_prompt() {}
    // A new generation starts from `prompt` (its last token is the first root).
    virtual void begin(std::span<const int> prompt) {}
    virtual CandidateTree propose(const DraftContext& context) = 0;
    // The stage that fills a device_tokens tree during the verify pass.
    virtual const DraftStage* device_stage() const { return nullptr; }
    // The verdict on the last proposal (path, accepted count, emitted tokens).
    virtual void verified(const VerifiedStep& step) {}
    // Queue submits the drafter made itself (a draft model's forwards).
    virtual uint64_t submits() const { return 0; }
    virtual std::vector<PreparedBlock> blocks_to_prepare() const { return {}; }

    // For the step controller (controlled_drafter.h):
    // True when a proposal costs next to nothing (a lookup, a shape whose tokens the verify pass
    // drafts), so it can be made every step and used only when it pays.
    virtual bool cheap_proposal() const { return false; }
    // The deepest proposal its options allow.
    virtual int depth_limit() const { return TokenBlock::kMaxTokens - 1; }
    // What its acceptance is learned by, and a node's value of it.
    virtual AcceptanceEvidence evidence() const { return AcceptanceEvidence::Confidence; }
    virtual int evidence_of(const CandidateTree& t, int node) const { return confidence_bin(t.q[size_t(node)]); }
    // What the controller weighed before the last proposal (null for a drafter that is not one).
    virtual const ControlTrace* control() const { return nullptr; }
};

// Plain decoding: every step verifies the root alone and emits the model's own next token.
class NoDrafter final : public Drafter {
public:
    DrafterKind kind() const override { return DrafterKind::Plain; }
    CandidateTree propose(const DraftContext& c) override { return CandidateTree::root_only(c.sequence.back()); }
};

}  // namespace medusa
