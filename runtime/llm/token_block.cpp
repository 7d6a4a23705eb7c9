#include "llm/token_block.h"

#include <stdexcept>
#include <string>

namespace medusa {

TokenBlock TokenBlock::causal(int base, const std::vector<int>& tokens) {
    TokenBlock b;
    b.base = base;
    b.tokens = tokens;
    const int n = int(tokens.size());
    b.positions.resize(n);
    b.mask.assign(n, std::vector<uint8_t>(n, 0));
    for (int t = 0; t < n; ++t) {
        b.positions[t] = base + t;
        for (int u = 0; u <= t; ++u) b.mask[t][u] = 1;
    }
    return b;
}

bool TokenBlock::is_causal() const {
    if (window > 0) return false;
    for (int t = 0; t < size(); ++t) {
        if (positions[t] != base + t) return false;
        for (int u = 0; u < size(); ++u)
            if (sees(t, u) != (u <= t)) return false;
    }
    return true;
}

void TokenBlock::validate(int context, int vocab) const {
    const int n = size();
    if (n == 0) throw std::invalid_argument("empty token block");
    if (n > kMaxTokens)
        throw std::invalid_argument("token block of " + std::to_string(n) + " tokens exceeds " +
                                    std::to_string(kMaxTokens));
    if (int(positions.size()) != n || int(mask.size()) != n)
        throw std::invalid_argument("token block sizes disagree");
    if (base < 0 || base + n > context)
        throw std::invalid_argument("token block [" + std::to_string(base) + ", " + std::to_string(base + n) +
                                    ") does not fit the context of " + std::to_string(context));
    for (int t = 0; t < n; ++t) {
        if (tokens[t] < 0 || tokens[t] >= vocab)
            throw std::invalid_argument("token id " + std::to_string(tokens[t]) + " outside the vocabulary of " +
                                        std::to_string(vocab));
        if (positions[t] < 0 || positions[t] >= context)
            throw std::invalid_argument("position " + std::to_string(positions[t]) + " outside the context");
        if (int(mask[t].size()) != n || !mask[t][t]) throw std::invalid_argument("mask row must let a token see itself");
    }
    if (window < 0 || window > base || window > kMaxTokens)
        throw std::invalid_argument("a token block's window of " + std::to_string(window) + " slots before slot " +
                                    std::to_string(base) + " is out of range");
    if (window > 0) {
        if (int(window_mask.size()) != n) throw std::invalid_argument("token block window mask sizes disagree");
        for (const auto& row : window_mask)
            if (int(row.size()) != window) throw std::invalid_argument("token block window mask sizes disagree");
    }
}

}  // namespace medusa
