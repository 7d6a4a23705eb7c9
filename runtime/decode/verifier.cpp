#include "decode/verifier.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace medusa {

void Verifier::start(std::span<const int> prompt) {
    const int ctx = runner_->config().seq_len;
    if (prompt.empty()) throw std::invalid_argument("the prompt has no tokens (it needs at least BOS)");
    if (int(prompt.size()) > ctx)
        throw std::invalid_argument("the prompt has " + std::to_string(prompt.size()) +
                                    " tokens, more than the context of " + std::to_string(ctx));
    const auto cached = runner_->cached_tokens();
    const size_t want = prompt.size() - 1;
    size_t same = 0;
    while (same < want && same < cached.size() && cached[same] == prompt[same]) ++same;
    same = size_t(runner_->reusable_prefix(int(same)));
    runner_->prefill(int(same), prompt.subspan(same, want - same));
    base_ = int(want);
}

VerifiedStep Verifier::step(const CandidateTree& tree, const DraftStage* stage, std::span<const int> sequence,
                            Sampler& sampler) {
    const LlamaConfig& cfg = runner_->config();
    tree.validate(cfg.vocab_size);
    if (tree.size() > room()) throw std::invalid_argument("a candidate tree larger than the room left in the context");
    if (tree.token[0] != sequence.back()) throw std::invalid_argument("a candidate tree not rooted at the last token");
    if (tree.device_tokens && !stage) throw std::invalid_argument("a device-drafted tree without its stage");

    // Statistics serve the rules' single probabilities and, at temperature 1 for greedy
    // decoding, the trace's display of how sure the model was; a lone root needs none.
    const bool greedy = rule_->kind() == AcceptRule::Greedy;
    TreeRunOptions o;
    o.stage = tree.device_tokens ? stage : nullptr;
    o.stats = tree.size() > 1;
    o.temperature = greedy ? 1.0f : sampler.params().temperature;
    runner_->run(tree.block(base_), o);

    VerifiedStep v;
    v.base = base_;
    v.tree = tree;
    if (tree.device_tokens) {  // the stage's drafts exist only on the device until now
        const auto tokens = runner_->tokens();
        const auto q = runner_->draft_probs();
        v.tree.token.assign(tokens.begin(), tokens.end());
        v.tree.q.assign(q.begin(), q.end());
        v.tree.device_tokens = false;
    }
    NodeDistributions dist(*runner_, v.tree, sequence, sampler,
                           o.stats ? std::optional<float>(o.temperature) : std::nullopt);
    v.verdict = rule_->accept(v.tree, dist, sampler);
    const std::vector<int>& path = v.verdict.path;
    // A token outside the vocabulary here is the argmax of NaN logits (the GPU's and the CPU
    // reference's -1); stop before it reaches the cache or the text.
    for (size_t d = 1; d < path.size(); ++d) {
        const int token = v.tree.token[path[d]];
        if (token < 0 || token >= cfg.vocab_size) throw NonFiniteLogits();
        v.tokens.push_back(token);
    }
    if (v.verdict.bonus < 0 || v.verdict.bonus >= cfg.vocab_size) throw NonFiniteLogits();
    v.tokens.push_back(v.verdict.bonus);
    // Token k follows path node k: read before keep_path, which may reuse what the pass left.
    if (logprobs_ >= 0)
        for (size_t k = 0; k < v.tokens.size(); ++k)
            v.logprobs.push_back(token_logprobs(runner_->logits(path[k]), v.tokens[k], logprobs_));
    runner_->keep_path(path);
    base_ += int(path.size());
    return v;
}

}  // namespace medusa
