#include "llm/cpu_tree_runner.h"

#include "llm/cpu_eagle_runner.h"
#include "llm/softmax.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace medusa {

// The CPU's Medusa stage: the reference heads' top-k from the last kept hidden state.
class CpuMedusaHeads {
public:
    CpuMedusaHeads(const MedusaHeads& heads, int depth, int topk, std::span<const int> candidate)
        : heads_(heads), depth_(depth), topk_(topk), candidate_(candidate.begin(), candidate.end()) {}
    int nodes() const { return int(candidate_.size()); }

    // Fills tokens 1.. of `block` and each node's head probability.
    void draft(std::span<const float> hidden, TokenBlock& block, std::vector<float>& probs) const {
        std::vector<int> cand_token(1 + depth_ * topk_, 0);
        std::vector<float> cand_prob(cand_token.size(), 1.0f);
        for (int k = 0; k < depth_; ++k) {
            const std::vector<float> l = heads_.logits(k, hidden);
            std::vector<int> order(l.size());
            for (size_t v = 0; v < order.size(); ++v) order[v] = int(v);
            std::partial_sort(order.begin(), order.begin() + topk_, order.end(),
                              [&](int a, int b) { return l[a] > l[b] || (l[a] == l[b] && a < b); });
            const ExpSum z = exp_sum(l);
            for (int r = 0; r < topk_; ++r) {
                cand_token[1 + k * topk_ + r] = order[r];
                cand_prob[1 + k * topk_ + r] = float(z.prob(l[order[r]]));
            }
        }
        probs.assign(block.size(), 1.0f);
        for (int i = 1; i < block.size(); ++i) {
            block.tokens[i] = cand_token[candidate_[i]];
            probs[i] = cand_prob[candidate_[i]];
        }
    }

private:
    MedusaHeads heads_;
    int depth_, topk_;
    std::vector<int> candidate_;
};


CpuTreeRunner::CpuTreeRunner(CpuReferenceModel& model) : model_(model) {}
CpuTreeRunner::~CpuTreeRunner() = default;

void CpuTreeRunner::prefill(int base, std::span<const int> tokens) {
    for (size_t start = 0; start < tokens.size(); start += TokenBlock::kMaxTokens) {
        const size_t end = std::min(tokens.size(), start + TokenBlock::kMaxTokens);
        model_.forward(TokenBlock::causal(base + int(start), {tokens.begin() + start, tokens.begin() + end}));
        ++forwards_;
    }
    last_hidden_.clear();
}

void CpuTreeRunner::run(const TokenBlock& block, const TreeRunOptions& o) {
    block_ = block;
    draft_probs_.clear();
    if (o.stage) {
        const CpuMedusaHeads* stage = &stages_.at(*o.stage);
        if (last_hidden_.empty()) throw std::logic_error("a drafting stage needs the hidden state of a kept node");
        if (block.size() > stage->nodes()) throw std::invalid_argument("a block larger than the stage's tree");
        stage->draft(last_hidden_, block_, draft_probs_);
    }
    model_.forward(block_);
    ++forwards_;
    stats_temperature_.reset();
    if (o.stats) stats_temperature_ = o.temperature;
    stats_.assign(block_.size(), std::nullopt);
}

NodeStats CpuTreeRunner::stats(int node) const {
    if (!stats_temperature_ || node < 0 || node >= int(stats_.size()))
        throw std::out_of_range("no statistics for that node");
    if (!stats_[node]) {
        const float inv_t = 1.0f / (*stats_temperature_ > 0 ? *stats_temperature_ : 1.0f);
        const auto l = model_.logits(node);
        NodeStats s;
        s.log_normalizer = float(exp_sum(l, inv_t).log_normalizer());
        double h = 0;
        for (float x : l) {
            const double p = std::exp(double(x * inv_t) - s.log_normalizer);
            h -= p * std::log(p + 1e-5);
        }
        s.entropy = float(h);
        stats_[node] = s;
    }
    return *stats_[node];
}

void CpuTreeRunner::keep_path(std::span<const int> path) {
    std::vector<int> tokens;
    for (int node : path) {
        if (node < 0 || node >= block_.size()) throw std::out_of_range("an accepted node outside the last block");
        tokens.push_back(block_.tokens[node]);
    }
    const auto h = model_.hidden(path.back());
    last_hidden_.assign(h.begin(), h.end());
    model_.keep_path(block_.base, path, tokens);
}

std::unique_ptr<DraftStage> CpuTreeRunner::medusa_stage(const ModelFile&, const MedusaHeads& heads, int depth, int topk,
                                                        std::span<const int> candidate) {
    if (depth < 1 || depth > heads.count()) throw std::invalid_argument("a Medusa stage needs as many heads as levels");
    auto stage = std::make_unique<CpuMedusaHeads>(heads, depth, topk, candidate);
    const int nodes = stage->nodes();
    return stages_.add(std::move(stage), nodes);
}

}  // namespace medusa

namespace medusa {

std::unique_ptr<EagleRunner> CpuTreeRunner::eagle_runner(const ModelFile& file, const EagleLayer& layer) {
    return std::make_unique<CpuEagleRunner>(model_, file, layer);
}

}  // namespace medusa
