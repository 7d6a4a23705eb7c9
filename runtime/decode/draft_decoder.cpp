#include "decode/draft_decoder.h"
#include "decode/step_output.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace medusa {

namespace {
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }
}  // namespace

const char* draft_rule_name(DraftRule r) {
    switch (r) {
        case DraftRule::Greedy: return "greedy";
        case DraftRule::Sample: return "sample";
        case DraftRule::SampleWithoutResidual: return "sample-without-residual (broken, for tests)";
    }
    return "?";
}

DraftRule parse_draft_rule(const std::string& s) {
    if (s == "greedy") return DraftRule::Greedy;
    if (s == "sample") return DraftRule::Sample;
    throw std::invalid_argument("unknown draft acceptance rule '" + s + "' (greedy or sample)");
}

void check_draft_compatible(const LlamaConfig& target, const LlamaConfig& draft, const std::string& target_name,
                            const std::string& draft_name) {
    // Token ids mean nothing across tokenizers; a size mismatch is the one thing we can always see.
    if (target.vocab_size != draft.vocab_size)
        throw std::invalid_argument("the draft model " + draft_name + " has a vocabulary of " +
                                    std::to_string(draft.vocab_size) + " tokens but the target model " + target_name +
                                    " has " + std::to_string(target.vocab_size) +
                                    ": a draft model must use the target's tokenizer");
}

DraftDecoder::DraftDecoder(LanguageModel& target, LanguageModel& draft, DraftOptions options)
    : target_(target), draft_(draft), options_(std::move(options)), sampler_({0, 1, 0}) {
    check_draft_compatible(target.config(), draft.config(), "(target)", "(draft)");
    if (options_.min_gamma < 1 || options_.max_gamma < options_.min_gamma)
        throw std::invalid_argument("draft gamma bounds must satisfy 1 <= min <= max");
    if (options_.gamma < 1) throw std::invalid_argument("draft gamma must be >= 1");
    // The verify block is [root, x1..xgamma]; it must fit one forward.
    options_.max_gamma = std::min(options_.max_gamma, TokenBlock::kMaxTokens - 1);
    gamma_ = std::min(options_.gamma, TokenBlock::kMaxTokens - 1);
}

std::vector<float> DraftDecoder::dist(LanguageModel& model, int row, std::span<const int> context) const {
    return sampler_.distribution(model.logits(row), context);
}

int DraftDecoder::greedy_pick(LanguageModel& model, int row, std::span<const int> context) const {
    return sampler_.penalizes() ? argmax(dist(model, row, context)) : model.argmax(row);
}

// Feeds the draft the tokens it has not seen, seq[draft_valid_ .. upto), in causal chunks.
// Returns the cache slot the last block started at.
int DraftDecoder::sync_draft(const std::vector<int>& seq, int upto) {
    int start = draft_valid_;
    while (draft_valid_ < upto) {
        start = draft_valid_;
        const int end = std::min(upto, draft_valid_ + TokenBlock::kMaxTokens);
        draft_.forward(TokenBlock::causal(draft_valid_, {seq.begin() + draft_valid_, seq.begin() + end}));
        ++dstats_.draft_forwards;
        draft_valid_ = end;
    }
    return start;
}

StepTrace DraftDecoder::step(int base, int root, int gamma, std::vector<int>& seq) {
    const bool greedy = options_.rule == DraftRule::Greedy;
    StepTrace tr;
    tr.base = base;
    TreeNodeTrace r;
    r.token = root;
    r.passes = r.tried = r.accepted = true;
    tr.nodes.push_back(r);

    // Draft: gamma tokens autoregressively, keeping q (the draft's distribution) of each.
    auto t0 = Clock::now();
    std::vector<int> xs;
    std::vector<std::vector<float>> qs;
    if (draft_valid_ > base) draft_valid_ = base;  // never trust slots at or past the root
    int row = 0;  // the root's row in the draft's catch-up block
    if (gamma > 0) row = base - sync_draft(seq, base + 1);
    // The context of drafted position i: the sequence up to the root, then x1..xi.
    std::vector<int> context = seq;
    for (int i = 0; i < gamma; ++i) {
        if (i > 0) {
            draft_.forward(TokenBlock::causal(base + i, {xs.back()}));
            ++dstats_.draft_forwards;
            row = 0;
        }
        if (greedy) {
            xs.push_back(greedy_pick(draft_, row, context));
            qs.emplace_back();
        } else {
            qs.push_back(dist(draft_, row, context));
            xs.push_back(sampler_.draw(qs.back()));
        }
        context.push_back(xs.back());
    }
    context.resize(seq.size());
    dstats_.draft_ms += ms_since(t0);

    // Verify: one causal block; logits row i predicts the token after block token i.
    t0 = Clock::now();
    std::vector<int> block = {root};
    block.insert(block.end(), xs.begin(), xs.end());
    target_.forward(TokenBlock::causal(base, block));
    dstats_.verify_ms += ms_since(t0);

    int n = 0;
    int next = -1;
    for (int i = 0; i < gamma; ++i) {
        TreeNodeTrace node;
        node.token = xs[i];
        node.parent = i;
        node.depth = i + 1;
        node.tried = true;
        if (greedy) {
            const int choice = greedy_pick(target_, i, context);
            node.passes = xs[i] == choice;
            node.model_prob = node.passes ? 1.0f : 0.0f;
            if (!node.passes) next = choice;
        } else {
            const auto p = dist(target_, i, context);
            const auto& q = qs[i];
            node.head_prob = q[xs[i]];
            node.model_prob = p[xs[i]];
            node.passes = sampler_.uniform() * node.head_prob < node.model_prob;  // u < p/q without dividing
            if (!node.passes) {
                std::vector<float> residual(p.size());
                double mass = 0;
                for (size_t k = 0; k < p.size(); ++k) mass += residual[k] = std::max(0.0f, p[k] - q[k]);
                // The broken variant forgets that q already had its chance at the tokens it likes.
                const bool use_p = options_.rule == DraftRule::SampleWithoutResidual || mass <= 0;
                next = sampler_.draw(use_p ? std::span<const float>(p) : std::span<const float>(residual));
            }
        }
        tr.nodes.push_back(node);
        if (!node.passes) break;
        tr.nodes.back().accepted = true;
        context.push_back(xs[i]);
        ++n;
    }
    // The remaining drafted tokens were never tried: show them in the chain all the same.
    for (int i = int(tr.nodes.size()) - 1; i < gamma; ++i) {
        TreeNodeTrace node;
        node.token = xs[i];
        node.parent = i;
        node.depth = i + 1;
        if (!greedy) node.head_prob = qs[i][xs[i]];
        tr.nodes.push_back(node);
    }
    if (n == gamma) next = greedy ? greedy_pick(target_, gamma, context) : sampler_.draw(dist(target_, gamma, context));

    for (int d = 0; d <= n; ++d) tr.path.push_back(d);
    tr.accepted = n;
    tr.bonus = next;
    for (int d = 1; d <= n; ++d) tr.emitted.push_back(xs[d - 1]);
    tr.emitted.push_back(next);
    seq.insert(seq.end(), tr.emitted.begin(), tr.emitted.end());
    // The draft saw root, x1..x(gamma-1); the ones it saw that were accepted stay valid.
    if (gamma > 0) draft_valid_ = base + 1 + std::min(n, gamma - 1);
    dstats_.drafted += gamma;
    dstats_.accepted += n;
    ++dstats_.steps;

    if (options_.adaptive_gamma) {
        if (n == gamma && gamma == gamma_) gamma_ = std::min(gamma_ + 1, options_.max_gamma);
        else if (2 * n < gamma) gamma_ = std::max(gamma_ - 1, options_.min_gamma);
    }
    return tr;
}

GenerationStats DraftDecoder::generate(const std::vector<int>& prompt,
                                       const std::function<bool(const StepTrace&)>& on_step) {
    GenerationStats stats;
    stats.prompt_tokens = int(prompt.size());
    dstats_ = {};
    sampler_ = Sampler({options_.rule == DraftRule::Greedy ? 0.0f : options_.temperature, options_.top_p,
                        options_.seed, options_.top_k, options_.repeat_penalty, options_.repeat_last_n});
    // Adaptive gamma restarts from the option each time, so a seed always gives the same text.
    gamma_ = std::min(options_.gamma, TokenBlock::kMaxTokens - 1);
    const int target_ctx = target_.config().seq_len, draft_ctx = draft_.config().seq_len;

    auto t0 = Clock::now();
    const int row = prefill(target_, prompt);
    // The first token comes from the prompt's own logits, exactly as plain decoding takes it.
    const int first = sampler_.greedy() ? greedy_pick(target_, row, prompt) : sampler_.draw(dist(target_, row, prompt));
    draft_valid_ = 0;
    if (int(prompt.size()) < draft_ctx) sync_draft(prompt, int(prompt.size()));
    stats.prefill_ms = ms_since(t0);

    t0 = Clock::now();
    StepTrace first_step;
    first_step.base = int(prompt.size());
    first_step.bonus = first;
    TreeNodeTrace root;
    root.token = first;
    root.passes = root.tried = root.accepted = true;
    first_step.nodes = {root};
    first_step.path = {0};
    bool done = !emit_first_token(first_step, first, options_.stop_tokens, options_.max_new_tokens, stats, on_step);
    std::vector<int> seq = prompt;
    seq.push_back(first);
    int base = int(prompt.size());
    for (int step_no = 1; !done && stats.new_tokens < options_.max_new_tokens; ++step_no) {
        if (base >= target_ctx) {
            stats.stop_reason = "context";
            break;
        }
        // Drafting past what is still wanted, or past either model's context, is wasted work.
        int g = std::min({gamma_, target_ctx - base - 1, options_.max_new_tokens - stats.new_tokens - 1});
        g = std::max(0, std::min(g, draft_ctx - base));
        auto ts = Clock::now();
        StepTrace tr = step(base, seq.back(), g, seq);
        tr.step = step_no;
        tr.wall_ms = ms_since(ts);
        ++stats.forward_passes;
        base = tr.base + tr.accepted + 1;
        done = !keep_step_tokens(tr.emitted, options_.stop_tokens, options_.max_new_tokens, stats);
        if (!on_step(tr)) stats.stop_reason = "cancelled", done = true;
    }
    stats.decode_ms = ms_since(t0);
    return stats;
}

}  // namespace medusa
