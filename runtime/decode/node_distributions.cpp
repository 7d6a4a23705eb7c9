#include "decode/node_distributions.h"

#include <algorithm>
#include <cmath>

#include "llm/softmax.h"

namespace medusa {

NodeDistributions::NodeDistributions(TreeRunner& runner, const CandidateTree& tree, std::span<const int> sequence,
                                     const Sampler& shaping, std::optional<float> stats_temperature)
    : runner_(runner), tree_(tree), sequence_(sequence), shaping_(shaping), stats_temperature_(stats_temperature),
      p_(tree.size()) {}

std::vector<int> NodeDistributions::context(int node) const {
    std::vector<int> c(sequence_.begin(), sequence_.end());
    const std::vector<int> path = tree_.path_to(node);
    for (size_t d = 1; d < path.size(); ++d) c.push_back(tree_.token[path[d]]);
    return c;
}

bool NodeDistributions::plain_sampling() const {
    const SamplingParams& s = shaping_.params();
    return !shaping_.greedy() && s.top_k == 0 && s.top_p >= 1.0f && s.min_p <= 0.0f && !shaping_.penalizes() &&
           stats_temperature_ && *stats_temperature_ == s.temperature;
}

const std::vector<float>& NodeDistributions::p(int node) {
    if (p_[node].empty()) p_[node] = shaping_.distribution(runner_.logits(node), context(node));
    return p_[node];
}

bool NodeDistributions::in_vocabulary(int token) const {
    return token >= 0 && token < runner_.config().vocab_size;
}

float NodeDistributions::prob(int node, int token) {
    if (!in_vocabulary(token)) return 0.0f;
    if (p_[node].empty() && plain_sampling()) {
        const float t = shaping_.params().temperature;
        return std::exp(runner_.logits(node)[token] / t - runner_.stats(node).log_normalizer);
    }
    return p(node)[token];
}

int NodeDistributions::greedy(int node) {
    if (!shaping_.penalizes()) return runner_.argmax(node);
    return shaping_.greedy_token(runner_.logits(node), context(node));
}

float NodeDistributions::entropy(int node) {
    if (p_[node].empty() && plain_sampling()) return runner_.stats(node).entropy;
    double h = 0;
    for (float x : p(node)) h -= double(x) * std::log(double(x) + 1e-5);
    return float(h);
}

float NodeDistributions::raw_prob(int node, int token) {
    if (!in_vocabulary(token)) return 0.0f;
    if (stats_temperature_ && *stats_temperature_ == 1.0f)
        return std::exp(runner_.logits(node)[token] - runner_.stats(node).log_normalizer);
    const auto l = runner_.logits(node);
    return float(exp_sum(l).prob(l[token]));
}

}  // namespace medusa
