// Acceptance rules: given a verified candidate tree and the target's distribution after each
// node, which path to keep and which token the target adds after it (the bonus).
// - Greedy: keep the longest path of nodes that are their parent's greedy token; the bonus is
//   the greedy token after it. Exactly plain greedy decoding.
// - Typical (FasterDecoding/Medusa, evaluate_posterior with fast=True): a node passes when its
//   probability at the parent exceeds min(eps, delta * exp(-H(parent))); the longest passing
//   path is kept (ties: the most likely), and the bonus is the greedy token after it.
// - Sample (lossless tree speculative sampling, SpecInfer/EAGLE): from the root, try each node's
//   children in order; accept child x with probability min(1, r(x) / q(x)), where r is the
//   target's distribution less the mass already rejected here and q the distribution x was
//   drawn from (a point mass for deterministic drafts); after a rejection r becomes
//   norm(max(0, r - q)). When no child is accepted the bonus is drawn from r. The output
//   follows the target's own distribution whatever the drafter proposed.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "decode/candidate_tree.h"
#include "decode/decoding_kinds.h"
#include "decode/step_trace.h"
#include "decode/node_distributions.h"
#include "decode/sampler.h"

namespace medusa {

struct TypicalParams {
    float eps = 0.09f;   // Medusa's posterior_threshold
    float delta = 0.3f;  // Medusa's posterior_alpha
    bool operator==(const TypicalParams&) const = default;
};

// Why a node passed or failed, with the number that decided it.
struct NodeVerdict {
    float model_prob = 1.0f;  // the target's probability of the node's token at its parent
    float limit = 0.0f;       // typical: the threshold it had to exceed
    int parent_greedy = -1;   // greedy: the target's own choice at the parent
    float draw = -1.0f;       // sample: the uniform u drawn for it
    float ratio = 0.0f;       // sample: r(x)/q(x) at its turn (r: what was left of p); accepted when u < ratio
    bool passes = false;      // meets the rule (sample: was accepted when tried)
    bool tried = false;       // its test happened (speculative sampling stops at an accepted sibling)
};

struct Verdict {
    std::vector<int> path;  // accepted nodes, root first
    int bonus = 0;
    std::vector<NodeVerdict> nodes;
    std::vector<RejectionBar> rejection;  // speculative sampling: see StepTrace::rejection
};

class AcceptanceRule {
public:
    virtual ~AcceptanceRule() = default;
    virtual AcceptRule kind() const = 0;
    // Drafters should sample their drafts and report q (lossless sampling), not take top-k.
    virtual bool samples_drafts() const { return false; }
    virtual Verdict accept(const CandidateTree& tree, NodeDistributions& p, Sampler& rng) = 0;
};

// The distribution left at a node after some of its children were rejected: the target's p
// with mass taken away, kept lazily as exclusions until a sampled draft's q must be subtracted.
class Residual {
public:
    Residual(NodeDistributions& p, int node) : p_(p), node_(node) {}
    float operator()(int token);  // r(token)
    void remove(int token);       // r <- norm(r with token's mass gone): a point-mass draft rejected
    void subtract(const std::vector<float>& q);  // r <- norm(max(0, r - q))
    std::vector<float> weights();  // r over the vocabulary (not necessarily normalised)

private:
    void materialize();
    NodeDistributions& p_;
    int node_;
    std::vector<int> removed_;
    double removed_mass_ = 0;
    std::vector<float> r_;  // once materialised
};

class GreedyAcceptance final : public AcceptanceRule {
public:
    AcceptRule kind() const override { return AcceptRule::Greedy; }
    Verdict accept(const CandidateTree& tree, NodeDistributions& p, Sampler& rng) override;
};

class TypicalAcceptance final : public AcceptanceRule {
public:
    explicit TypicalAcceptance(TypicalParams params) : params_(params) {}
    AcceptRule kind() const override { return AcceptRule::Typical; }
    Verdict accept(const CandidateTree& tree, NodeDistributions& p, Sampler& rng) override;

private:
    TypicalParams params_;
};

class SpeculativeSampling : public AcceptanceRule {
public:
    AcceptRule kind() const override { return AcceptRule::Sample; }
    bool samples_drafts() const override { return true; }
    Verdict accept(const CandidateTree& tree, NodeDistributions& p, Sampler& rng) override;

protected:
    // After child x (drawn from q, or deterministic when q is empty) was rejected at a node.
    virtual void reject(Residual& r, int x, const std::vector<float>& q) const;
};

// The rule for plain decoding's settings: at temperature 0 every rule is greedy.
std::unique_ptr<AcceptanceRule> make_acceptance_rule(AcceptRule rule, float temperature, TypicalParams typical = {});

}  // namespace medusa
