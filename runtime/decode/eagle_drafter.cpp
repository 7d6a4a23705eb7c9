#include "decode/eagle_drafter.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "decode/tree.h"

namespace medusa {

int eagle_deepest_level(int top_k) { return 2 + TokenBlock::kMaxTokens / std::max(top_k, 1); }

EagleDrafter::EagleDrafter(EagleRunner& runner, EagleOptions options) : runner_(runner), options_(std::move(options)) {
    if (options_.top_k < 1 || options_.top_k > 32) throw std::invalid_argument("EAGLE's top-k must be 1..32");
    if (options_.depth < 1 || options_.depth > 16) throw std::invalid_argument("EAGLE's depth must be 1..16");
    if (options_.choices.empty()) options_.depth = std::min(options_.depth, eagle_deepest_level(options_.top_k));
    if (options_.nodes < 1 || options_.nodes > TokenBlock::kMaxTokens - 1)
        throw std::invalid_argument("EAGLE's verified nodes must be 1.." + std::to_string(TokenBlock::kMaxTokens - 1));
    if (!options_.choices.empty()) options_.choices = make_tree(options_.choices, "eagle", {.topk = 32, .max_depth = 16}).choices;
    for (size_t i = 0; i < options_.choices.size(); ++i) choice_index_[options_.choices[i]] = int(i);
    prepare_runs();
}

void EagleDrafter::before_prompt() {
    runner_.attach();
    prepare_runs();  // again where attaching replaced the target's feature cache
}

void EagleDrafter::prepare_runs() {
    // Every block it runs, recorded now: catch-up runs and the levels' frontiers.
    for (int n : TokenBlock::catch_up_sizes()) runner_.prepare(n);
    const int widest = options_.choices.empty() ? options_.top_k : int(options_.choices.size());
    for (int n = TokenBlock::kCatchUpWhole + 1; n <= std::min(widest, TokenBlock::kMaxTokens); ++n) runner_.prepare(n);
}

void EagleDrafter::begin(std::span<const int> prompt) {
    synced_ = 0;
    // The prompt's pairs go through the layer now, with the target's prefill, rather than inside
    // the first step (which runs only the root's).
    const int root = int(prompt.size()) - 1;
    if (root < 2 || root > runner_.context()) return;
    DraftContext c;
    c.sequence = prompt.first(size_t(root));
    c.base = root - 1;
    sync(c);
}

std::vector<PreparedBlock> EagleDrafter::blocks_to_prepare() const {
    const int most = options_.choices.empty() ? options_.nodes + 1 : int(options_.choices.size()) + 1;
    std::vector<PreparedBlock> out;
    for (int n = 2; n <= std::min(most, TokenBlock::kMaxTokens); ++n) out.push_back({n, nullptr});
    return out;
}

bool EagleDrafter::sync(const DraftContext& c) {
    const int n = c.base;  // the root's slot; pairs (f_i, t_{i+1}) for i < n are due
    if (n == 0) return false;
    synced_ = std::min(synced_, n);
    if (synced_ == n) synced_ = n - 1;  // the root's own pair must be run for its prediction
    while (synced_ < n) {
        const int end = synced_ + TokenBlock::catch_up_size(n - synced_);
        std::vector<int> next(c.sequence.begin() + synced_ + 1, c.sequence.begin() + end + 1), source;
        for (int i = synced_; i < end; ++i) source.push_back(EagleRunner::target_slot(i));
        runner_.restart();
        runner_.run(TokenBlock::causal(synced_, next), source);
        root_t_ = end - 1 - synced_;
        synced_ = end;
    }
    return true;
}

void EagleDrafter::children(const DraftContext& c, int parent, int t_in_run, int count, std::vector<int>* out) {
    // The parent's context: the sequence and the drafted path to it, for the penalty's history.
    std::vector<int> context(c.sequence.begin(), c.sequence.end()), path;
    for (int a = parent; a > 0; a = cand_[a].parent) path.push_back(cand_[a].token);
    context.insert(context.end(), path.rbegin(), path.rend());
    // Ranked by the draft's own probabilities (temperature 1 when decoding greedily).
    SamplingParams p = c.sampler->params();
    if (c.sampler->greedy()) p.temperature = 1.0f, p.top_k = 0, p.top_p = 1.0f, p.min_p = 0.0f;
    std::vector<float> q;
    try {
        q = Sampler(p).distribution(runner_.logits(t_in_run), context);
    } catch (const NonFiniteLogits&) {
        return;  // the layer's own NaN (finite weights that overflow): no drafts, not the target's error
    }
    std::vector<int> order(q.size());
    std::iota(order.begin(), order.end(), 0);
    count = std::min(count, int(q.size()));
    std::partial_sort(order.begin(), order.begin() + count, order.end(),
                      [&](int a, int b) { return q[a] > q[b] || (q[a] == q[b] && a < b); });
    for (int r = 0; r < count && q[order[r]] > 0; ++r) {
        Candidate ch;
        ch.parent = parent;
        ch.token = order[r];
        ch.q = q[order[r]];
        ch.score = cand_[parent].score + std::log(double(q[order[r]]));
        ch.depth = cand_[parent].depth + 1;
        cand_.push_back(ch);
        out->push_back(int(cand_.size()) - 1);
    }
}

bool EagleDrafter::run_level(const DraftContext& c, const std::vector<int>& level) {
    const int n = int(level.size()), first = c.base;  // tree slots start at the root's slot
    if (n == 0 || next_slot_ + n > runner_.context() || next_slot_ - first > TokenBlock::kMaxTokens) return false;
    TokenBlock b;
    b.base = next_slot_;
    b.window = next_slot_ - first;
    std::vector<int> source;
    for (int i = 0; i < n; ++i) {
        const Candidate& x = cand_[level[i]];
        b.tokens.push_back(x.token);
        b.positions.push_back(c.base - 1 + x.depth);  // the pair (f-hat of its parent, e(x))
        b.mask.push_back(std::vector<uint8_t>(n, 0));
        b.mask.back()[i] = 1;
        std::vector<uint8_t> w(b.window, 0);
        for (int a = x.parent; a > 0; a = cand_[a].parent) w[cand_[a].slot - first] = 1;
        b.window_mask.push_back(std::move(w));
        source.push_back(cand_[x.parent].row);
    }
    const int row0 = runner_.rows();
    runner_.run(b, source);
    for (int i = 0; i < n; ++i) cand_[level[i]].row = row0 + i, cand_[level[i]].slot = next_slot_ + i;
    next_slot_ += n;
    return true;
}

CandidateTree EagleDrafter::build(const std::vector<int>& kept, int root_token) const {
    CandidateTree t = CandidateTree::root_only(root_token);
    std::vector<int> node_of(cand_.size(), -1);
    node_of[0] = 0;
    for (int k : kept) node_of[k] = t.add(node_of[cand_[k].parent], cand_[k].token, cand_[k].q);
    return t;
}

std::vector<int> EagleDrafter::draft_dynamic(const DraftContext& c, int room, int max_depth) {
    // EAGLE-2: expand the top_k likeliest nodes of each level; keep the likeliest overall.
    std::vector<int> frontier = {0}, all;
    for (int d = 1; d <= max_depth; ++d) {
        if (d > 1 && !run_level(c, frontier)) break;
        std::vector<int> level;
        for (size_t i = 0; i < frontier.size(); ++i)
            children(c, frontier[i], d == 1 ? root_t_ : int(i), options_.top_k, &level);
        all.insert(all.end(), level.begin(), level.end());
        std::stable_sort(level.begin(), level.end(), [&](int a, int b) { return cand_[a].score > cand_[b].score; });
        if (int(level.size()) > options_.top_k) level.resize(options_.top_k);
        std::sort(level.begin(), level.end());
        frontier = level;
    }
    // A parent is at least as likely as its children and comes first among equals, so the kept
    // set is a tree.
    std::stable_sort(all.begin(), all.end(), [&](int a, int b) { return cand_[a].score > cand_[b].score; });
    all.resize(std::min<size_t>(all.size(), size_t(std::min(room, options_.nodes))));
    std::sort(all.begin(), all.end());
    return all;
}

std::vector<int> EagleDrafter::draft_static(const DraftContext& c, int room, int max_depth) {
    // EAGLE-1: the listed rank paths, level by level, as far as the room allows.
    const auto& choices = options_.choices;
    std::vector<int> cand_of(choices.size(), -1), kept;
    for (int d = 1; d <= max_depth; ++d) {
        std::vector<size_t> here;  // this level's paths whose parent was drafted
        std::vector<int> parents;  // their parents, in order of first appearance
        for (size_t i = 0; i < choices.size() && int(kept.size() + here.size()) < room; ++i) {
            if (int(choices[i].size()) != d) continue;
            const int parent = d == 1 ? 0 : cand_of[choice_index_.at({choices[i].begin(), choices[i].end() - 1})];
            if (parent < 0) continue;
            here.push_back(i);
            if (std::find(parents.begin(), parents.end(), parent) == parents.end()) parents.push_back(parent);
        }
        if (here.empty() || (d > 1 && !run_level(c, parents))) break;
        for (size_t p = 0; p < parents.size(); ++p) {
            int max_rank = -1;
            for (size_t i : here)
                if ((d == 1 ? 0 : cand_of[choice_index_.at({choices[i].begin(), choices[i].end() - 1})]) == parents[p])
                    max_rank = std::max(max_rank, choices[i].back());
            std::vector<int> ranked;
            children(c, parents[p], d == 1 ? root_t_ : int(p), max_rank + 1, &ranked);
            for (size_t i : here) {
                const int parent = d == 1 ? 0 : cand_of[choice_index_.at({choices[i].begin(), choices[i].end() - 1})];
                const int r = choices[i].back();
                if (parent != parents[p] || r >= int(ranked.size())) continue;
                cand_of[i] = ranked[r];
                kept.push_back(ranked[r]);
            }
        }
    }
    std::sort(kept.begin(), kept.end());
    return kept;
}

CandidateTree EagleDrafter::propose(const DraftContext& c) {
    const int root = c.sequence.back();
    const int room = c.max_nodes - 1, max_depth = std::min(options_.depth, c.max_depth);
    if (room < 1 || max_depth < 1 || !sync(c)) return CandidateTree::root_only(root);
    cand_.assign(1, Candidate{});
    cand_[0].token = root;
    cand_[0].row = runner_.rows() - 1;  // the root's own pair ran last in the catch-up
    next_slot_ = c.base;
    const std::vector<int> kept = options_.choices.empty() ? draft_dynamic(c, room, max_depth)
                                                           : draft_static(c, room, max_depth);
    return build(kept, root);
}

}  // namespace medusa
