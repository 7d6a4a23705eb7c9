// The tokens one forward pass processes: their ids, their RoPE positions, the cache slot the
// block starts at, and which block tokens each may attend to (on top of the cache prefix).
// A prompt is a causal block; a candidate tree is a block whose mask holds each node's ancestors.
// A tree drafted level by level puts each level in a block of its own: the `window` slots just
// before the block hold the levels already run, and window_mask says which of them (ancestors)
// each token sees; the slots before the window are seen by all.
#pragma once
#include <cstdint>
#include <vector>

#include "layouts/layout_types.h"

namespace medusa {

struct TokenBlock {
    static constexpr int kMaxTokens = MAX_BLOCK_TOKENS;  // what layouts/block_params.h holds
    // Causal catch-up runs (a draft model or EAGLE's layer reading what the target committed)
    // take up to kCatchUpWhole tokens at once, longer ones in blocks of a power of two: few
    // sizes (catch_up_sizes()), all recorded before the first token.
    static constexpr int kCatchUpWhole = 16;
    static int catch_up_size(int remaining) {
        if (remaining <= kCatchUpWhole) return remaining;
        int n = kCatchUpWhole;
        while (2 * n <= remaining && 2 * n <= kMaxTokens) n *= 2;
        return n;
    }
    static std::vector<int> catch_up_sizes() {
        std::vector<int> out;
        for (int n = 1; n <= kMaxTokens; n = n < kCatchUpWhole ? n + 1 : 2 * n) out.push_back(n);
        return out;
    }
    int base = 0;                    // cache slot of the first block token
    std::vector<int> tokens;
    std::vector<int> positions;
    std::vector<std::vector<uint8_t>> mask;  // mask[t][u]: token t sees block token u
    int window = 0;                                 // cached slots [base - window, base) seen by mask
    std::vector<std::vector<uint8_t>> window_mask;  // window_mask[t][w]: token t sees slot base - window + w

    int size() const { return int(tokens.size()); }
    bool sees(int t, int u) const { return mask[t][u] != 0; }
    // Whether block token t attends to cache slot s (s < base + size()).
    bool sees_slot(int t, int s) const {
        if (s >= base) return sees(t, s - base);
        if (s < base - window) return true;
        return window_mask[t][s - (base - window)] != 0;
    }

    // Tokens at consecutive positions, each seeing itself and all earlier ones.
    static TokenBlock causal(int base, const std::vector<int>& tokens);
    // Whether the block is such a causal run (its slots then continue the cached sequence).
    bool is_causal() const;
    // Throws std::invalid_argument when sizes disagree or a token cannot see itself.
    void validate(int context, int vocab) const;
};

}  // namespace medusa
