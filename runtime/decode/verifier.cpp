#include "decode/verifier.h"

#include <algorithm>
#include <chrono>
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
    runner_->prefill(int(same), prompt.subspan(same, want - same));
    base_ = int(want);
}

StepTrace Verifier::step(const CandidateTree& tree, const DraftStage* stage, std::span<const int> sequence,
                         Sampler& sampler) {
    const auto t0 = std::chrono::steady_clock::now();
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

    CandidateTree ran = tree;
    const auto tokens = runner_->tokens();
    ran.token.assign(tokens.begin(), tokens.end());
    if (tree.device_tokens) {
        const auto q = runner_->draft_probs();
        ran.q.assign(q.begin(), q.end());
    }
    NodeDistributions dist(*runner_, ran, sequence, sampler,
                           o.stats ? std::optional<float>(o.temperature) : std::nullopt);
    const Verdict v = rule_->accept(ran, dist, sampler);
    // A token outside the vocabulary here is the argmax of NaN logits (the GPU's and the CPU
    // reference's -1); stop before it reaches the cache or the text.
    for (size_t d = 1; d < v.path.size(); ++d)
        if (ran.token[v.path[d]] < 0 || ran.token[v.path[d]] >= cfg.vocab_size) throw NonFiniteLogits();
    if (v.bonus < 0 || v.bonus >= cfg.vocab_size) throw NonFiniteLogits();
    runner_->keep_path(v.path);

    StepTrace tr;
    tr.base = base_;
    tr.rule = accept_rule_name(rule_->kind());
    tr.path = v.path;
    tr.accepted = int(v.path.size()) - 1;
    tr.bonus = v.bonus;
    for (int i = 0; i < ran.size(); ++i) {
        TreeNodeTrace n;
        n.token = ran.token[i];
        n.parent = ran.parent[i];
        n.depth = ran.depth[i];
        n.rank = ran.rank[i];
        n.draft_prob = ran.q[i];
        n.sampled = i > 0 && !ran.child_q[ran.parent[i]].empty();
        n.model_prob = v.nodes[i].model_prob;
        n.limit = v.nodes[i].limit;
        n.parent_greedy = v.nodes[i].parent_greedy;
        n.draw = v.nodes[i].draw;
        n.ratio = v.nodes[i].ratio;
        n.passes = i == 0 || v.nodes[i].passes;
        n.tried = i == 0 || v.nodes[i].tried;
        tr.nodes.push_back(n);
    }
    for (int node : v.path) tr.nodes[node].accepted = true;
    for (size_t d = 1; d < v.path.size(); ++d) tr.emitted.push_back(ran.token[v.path[d]]);
    tr.emitted.push_back(v.bonus);
    tr.stage_ms = runner_->stage_ms();
    tr.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    base_ += int(v.path.size());
    return tr;
}

}  // namespace medusa
