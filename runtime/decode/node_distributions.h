// The target's next-token distribution after each node of a verified tree, computed only for
// the nodes an acceptance rule asks about. Node i's context is the sequence so far (ending at
// the root) and the tokens on the path from the root to i, so the repetition penalty sees the
// same history plain decoding would. With plain temperature sampling (no top-k, top-p or
// penalty) single probabilities come from the runner's per-node statistics, not whole rows.
#pragma once
#include <optional>
#include <span>
#include <vector>

#include "decode/candidate_tree.h"
#include "decode/sampler.h"
#include "llm/tree_runner.h"

namespace medusa {

class NodeDistributions {
public:
    // `tree` holds the tokens the pass ran with; `sequence` ends with the root. With
    // `stats_temperature` the runner has NodeStats at that temperature for every node.
    NodeDistributions(TreeRunner& runner, const CandidateTree& tree, std::span<const int> sequence,
                      const Sampler& shaping, std::optional<float> stats_temperature);

    // The distribution the next token after `node` is drawn from (Sampler::distribution).
    const std::vector<float>& p(int node);
    // p(node)[token], without building the row when the statistics suffice; 0 for a token outside
    // the vocabulary (a drafter's argmax of NaN logits is -1, and is never accepted).
    float prob(int node, int token);
    bool in_vocabulary(int token) const;
    // The greedy choice after `node`: the argmax of the (penalised) logits.
    int greedy(int node);
    // -sum p log(p + 1e-5) of p(node), the entropy FasterDecoding/Medusa's typical rule uses.
    float entropy(int node);
    // The same quantities at temperature 1 without shaping, for showing how sure the model was
    // (0 outside the vocabulary, as prob).
    float raw_prob(int node, int token);

private:
    std::vector<int> context(int node) const;
    bool plain_sampling() const;

    TreeRunner& runner_;
    const CandidateTree& tree_;
    std::span<const int> sequence_;
    const Sampler& shaping_;
    std::optional<float> stats_temperature_;
    std::vector<std::vector<float>> p_;  // per node, empty until asked for
};

}  // namespace medusa
