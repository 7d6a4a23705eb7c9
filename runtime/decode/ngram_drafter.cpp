#include "decode/ngram_drafter.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace medusa {

NgramDrafter::NgramDrafter(NgramOptions options) : options_(options) {
    if (options_.max_tokens < 1) throw std::invalid_argument("n-gram drafting needs at least 1 token per step");
    if (options_.min_match < 1 || options_.max_match < options_.min_match)
        throw std::invalid_argument("n-gram match lengths must satisfy 1 <= min <= max");
    if (options_.branches < 1) throw std::invalid_argument("n-gram drafting needs at least one branch");
}

std::vector<PreparedBlock> NgramDrafter::blocks_to_prepare() const {
    std::vector<PreparedBlock> out;
    for (int n = 2; n <= std::min(options_.max_tokens * options_.branches + 1, TokenBlock::kMaxTokens); ++n)
        out.push_back({n, nullptr});
    return out;
}

CandidateTree NgramDrafter::propose(const DraftContext& c) {
    const std::span<const int> s = c.sequence;
    const int len = int(s.size());
    CandidateTree t = CandidateTree::root_only(s.back());
    match_length_ = 0;
    const int depth = std::min({options_.max_tokens, c.max_depth, c.max_nodes - 1});
    if (depth < 1) return t;
    std::vector<std::vector<int>> found;
    for (int n = std::min(options_.max_match, len - 1); n >= options_.min_match && found.empty(); --n) {
        const auto suffix = s.subspan(len - n);
        for (int p = len - n - 1; p >= 0 && int(found.size()) < options_.branches; --p) {
            if (!std::equal(suffix.begin(), suffix.end(), s.begin() + p)) continue;
            std::vector<int> cont(s.begin() + p + n, s.begin() + std::min(p + n + depth, len));
            if (std::find(found.begin(), found.end(), cont) == found.end()) found.push_back(std::move(cont));
        }
        if (!found.empty()) match_length_ = n;
    }
    // A trie of the continuations; q shows the share of them that pass through each node.
    std::vector<int> votes = {0};
    for (const auto& cont : found) {
        int node = 0;
        for (int tok : cont) {
            int next = -1;
            for (int i = node + 1; i < t.size(); ++i)
                if (t.parent[i] == node && t.token[i] == tok) next = i;
            if (next < 0) {
                if (t.size() >= c.max_nodes) break;
                next = t.add(node, tok, 0.0f);
                votes.push_back(0);
            }
            ++votes[next];
            node = next;
        }
    }
    for (int i = 1; i < t.size(); ++i) t.q[i] = float(votes[i]) / float(found.size());
    return t;
}

}  // namespace medusa
