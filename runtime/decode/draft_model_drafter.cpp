#include "decode/draft_model_drafter.h"
#include "model/load_model.h"

#include <algorithm>
#include <stdexcept>

namespace medusa {

void check_draft_compatible(const LlamaConfig& target, const LlamaConfig& draft, const std::string& target_name,
                            const std::string& draft_name) {
    // Token ids mean nothing across tokenizers; a size mismatch is the one thing we can always see.
    if (target.vocab_size != draft.vocab_size)
        throw std::invalid_argument("the draft model " + draft_name + " has a vocabulary of " +
                                    std::to_string(draft.vocab_size) + " tokens but the target model " + target_name +
                                    " has " + std::to_string(target.vocab_size) +
                                    ": a draft model must use the target's tokenizer");
}

ModelFile load_draft_model(const std::string& path, const ModelFile& target) {
    ModelFile draft = load_model(path);
    check_draft_compatible(target.config, draft.config, target.path, path);
    // Same size is not the same tokenizer: when both files carry one, they must agree.
    if (!target.embedded_tokenizer.empty() && !draft.embedded_tokenizer.empty() &&
        target.embedded_tokenizer != draft.embedded_tokenizer)
        throw std::invalid_argument("the draft model " + path + " embeds a different tokenizer from the target model " +
                                    target.path + ": a draft model must use the target's tokenizer");
    return draft;
}

DraftModelDrafter::DraftModelDrafter(LanguageModel& draft, DraftModelOptions options)
    : draft_(draft), options_(options) {
    if (options_.min_gamma < 1 || options_.max_gamma < options_.min_gamma)
        throw std::invalid_argument("draft gamma bounds must satisfy 1 <= min <= max");
    if (options_.gamma < 1) throw std::invalid_argument("draft gamma must be >= 1");
    if (options_.branches < 1 || options_.branches > 8) throw std::invalid_argument("draft branches must be 1..8");
    options_.max_gamma = std::min(options_.max_gamma, TokenBlock::kMaxTokens - 1);
    gamma_ = std::min(options_.gamma, options_.max_gamma);
    // Every block it runs, recorded now: catch-up runs, single drafts, a tree level's frontier.
    for (int n : TokenBlock::catch_up_sizes()) draft_.prepare(n);
}

std::vector<PreparedBlock> DraftModelDrafter::blocks_to_prepare() const {
    std::vector<PreparedBlock> out;
    const int most = std::min(depth_limit() * options_.branches + 1, TokenBlock::kMaxTokens);
    for (int n = 2; n <= most; ++n) out.push_back({n, nullptr});
    return out;
}

void DraftModelDrafter::begin(std::span<const int> prompt) {
    // Adaptive gamma restarts from the option each time, so a seed always gives the same text.
    gamma_ = std::min(options_.gamma, options_.max_gamma);
    valid_ = 0;
    chain_slots_ = 0;
    // The prompt before its last token goes through the draft now, with the target's prefill,
    // rather than inside the first step.
    const int root = int(prompt.size()) - 1;
    if (root >= 1 && root < draft_.config().seq_len) catch_up(prompt, root - 1);
}

void DraftModelDrafter::forward(const TokenBlock& block) {
    draft_.forward(block);
    ++forwards_;
}

int DraftModelDrafter::catch_up(std::span<const int> sequence, int base) {
    valid_ = std::min(valid_, base);  // never trust slots at or past the root
    int start = valid_;
    while (valid_ <= base) {
        start = valid_;
        const int end = valid_ + TokenBlock::catch_up_size(base + 1 - valid_);
        forward(TokenBlock::causal(valid_, {sequence.begin() + valid_, sequence.begin() + end}));
        valid_ = end;
    }
    return base - start;
}

namespace {

// The distribution children are drawn from (sampled drafts), or ranked by (deterministic ones):
// at temperature 0 the shaped distribution is a point mass, so rank by the draft's own
// probabilities at temperature 1 instead, and K branches are the draft's K best guesses.
std::vector<float> draft_q(std::span<const float> logits, const std::vector<int>& context, const DraftContext& c) {
    if (!c.sampler->greedy()) return c.sampler->distribution(logits, context);
    SamplingParams p = c.sampler->params();
    p.temperature = 1.0f;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    return Sampler(p).distribution(logits, context);
}

}  // namespace

void DraftModelDrafter::expand(CandidateTree& t, int node, std::vector<float> q, const DraftContext& c,
                               int max_children) {
    std::vector<float> left = q;
    for (int k = 0; k < max_children; ++k) {
        int x;
        if (c.sample_drafts) {
            double mass = 0;
            for (float v : left) mass += v;
            if (mass <= 0) break;
            x = c.sampler->draw(left);
        } else {
            x = int(std::max_element(left.begin(), left.end()) - left.begin());  // ties: the lowest id
            if (left[x] <= 0) break;
        }
        t.add(node, x, q[x]);
        left[x] = 0;  // without replacement
    }
    if (c.sample_drafts) t.child_q[node] = std::move(q);
}

CandidateTree DraftModelDrafter::draft_chain(const DraftContext& c, int depth, int row) {
    CandidateTree t = CandidateTree::root_only(c.sequence.back());
    std::vector<int> context(c.sequence.begin(), c.sequence.end());
    for (int d = 1; d <= depth; ++d) {
        if (d > 1) {
            forward(TokenBlock::causal(c.base + d - 1, {t.token.back()}));
            row = 0;
        }
        expand(t, d - 1, draft_q(draft_.logits(row), context, c), c, 1);
        if (t.size() == d) break;  // q had no mass left
        context.push_back(t.token.back());
    }
    chain_slots_ = std::max(0, t.size() - 2);  // drafts 1..depth-1 went through the draft
    valid_ = c.base + 1 + chain_slots_;        // until the verdict says how many of them stand
    return t;
}

CandidateTree DraftModelDrafter::draft_tree(const DraftContext& c, int depth, int row) {
    const int K = options_.branches;
    const int draft_ctx = draft_.config().seq_len;
    CandidateTree t = CandidateTree::root_only(c.sequence.back());
    std::vector<double> cum = {1.0};  // the draft's probability of each node's whole path
    std::vector<int> frontier = {0};
    std::vector<int> row_of = {row};  // a node's row in the last draft forward, -1 if not in it
    std::vector<int> slot_of = {c.base};  // where a forwarded node's entries sit in the draft's cache
    int next_slot = c.base + 1;
    for (int d = 1; d <= depth && !frontier.empty() && t.size() < c.max_nodes; ++d) {
        if (d > 1) {
            // The frontier as one block after the nodes already run: each node sees the root and
            // its other ancestors through the window over those slots.
            const int n = int(frontier.size());
            if (next_slot + n > draft_ctx) break;
            TokenBlock b;
            b.base = next_slot;
            b.window = next_slot - (c.base + 1);
            for (int i = 0; i < n; ++i) {
                const int f = frontier[i];
                b.tokens.push_back(t.token[f]);
                b.positions.push_back(c.base + t.depth[f]);
                b.mask.push_back(std::vector<uint8_t>(n, 0));
                b.mask.back()[i] = 1;
                std::vector<uint8_t> w(b.window, 0);
                for (int a = t.parent[f]; a > 0; a = t.parent[a]) w[slot_of[a] - (c.base + 1)] = 1;
                b.window_mask.push_back(std::move(w));
            }
            forward(b);
            row_of.assign(t.size(), -1);
            slot_of.resize(t.size(), -1);
            for (int i = 0; i < n; ++i) row_of[frontier[i]] = i, slot_of[frontier[i]] = next_slot + i;
            next_slot += n;
        }
        std::vector<int> children;
        for (int f : frontier) {
            const int room = c.max_nodes - t.size();
            if (room <= 0) break;
            std::vector<int> context(c.sequence.begin(), c.sequence.end());
            const std::vector<int> path = t.path_to(f);
            for (size_t i = 1; i < path.size(); ++i) context.push_back(t.token[path[i]]);
            const int first = t.size();
            expand(t, f, draft_q(draft_.logits(row_of[f]), context, c), c, std::min(K, room));
            for (int ch = first; ch < t.size(); ++ch) {
                cum.push_back(cum[f] * t.q[ch]);
                children.push_back(ch);
            }
        }
        // The K most likely nodes of this level are expanded next.
        std::stable_sort(children.begin(), children.end(), [&](int a, int b) { return cum[a] > cum[b]; });
        if (int(children.size()) > K) children.resize(K);
        std::sort(children.begin(), children.end());
        frontier = children;
    }
    chain_slots_ = 0;  // the levels' blocks left no usable entries after the root
    return t;
}

CandidateTree DraftModelDrafter::propose(const DraftContext& c) {
    const int root = c.sequence.back();
    const int draft_ctx = draft_.config().seq_len;
    // Drafting past what is wanted, past the tree's room or past the draft's context is waste.
    int depth = std::min({gamma_, c.max_depth, c.max_nodes - 1, draft_ctx - c.base - 1});
    last_base_ = c.base;
    last_depth_ = 0;
    chain_slots_ = 0;
    if (depth < 1) {
        valid_ = std::min(valid_, c.base);
        return CandidateTree::root_only(root);
    }
    const int row = catch_up(c.sequence, c.base);
    last_was_chain_ = options_.branches == 1;
    CandidateTree t = last_was_chain_ ? draft_chain(c, depth, row) : draft_tree(c, depth, row);
    last_depth_ = t.max_depth();
    return t;
}

void DraftModelDrafter::verified(const VerifiedStep& step) {
    const int n = step.accepted();
    // The root is in the draft's cache; so are the chain drafts it forwarded, as far as accepted.
    valid_ = std::min(valid_, last_base_ + 1 + (last_was_chain_ ? std::min(n, chain_slots_) : 0));
    if (options_.adaptive_gamma && last_depth_ > 0) {
        if (n == last_depth_ && last_depth_ == gamma_) gamma_ = std::min(gamma_ + 1, options_.max_gamma);
        else if (2 * n < last_depth_) gamma_ = std::max(gamma_ - 1, options_.min_gamma);
    }
}

}  // namespace medusa
