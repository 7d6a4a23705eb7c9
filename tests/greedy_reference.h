// Plain greedy decoding written out against the model interface alone: the prompt as causal
// blocks, then one token per forward pass until `n` tokens or the end of the context. It shares
// no code with runtime/decode (except the penalty's arithmetic), so it is the independent
// reference every drafter must reproduce token for token.
#pragma once
#include <algorithm>
#include <vector>

#include "decode/sampler.h"
#include "llm/language_model.h"

namespace medusa::test {

inline std::vector<int> greedy_ar(LanguageModel& m, const std::vector<int>& prompt, int n, float penalty = 1.0f,
                                  int last_n = 64) {
    const int ctx = m.config().seq_len;
    int row = 0;
    for (size_t s = 0; s < prompt.size(); s += TokenBlock::kMaxTokens) {
        const size_t e = std::min(prompt.size(), s + TokenBlock::kMaxTokens);
        m.forward(TokenBlock::causal(int(s), {prompt.begin() + s, prompt.begin() + e}));
        row = int(e - s) - 1;
    }
    const Sampler shaping({0.0f, 1.0f, 0, 0, penalty, last_n});
    std::vector<int> seq = prompt, out;
    while (int(out.size()) < n) {
        const int t = shaping.greedy_token(m.logits(row), seq);
        out.push_back(t);
        seq.push_back(t);
        if (int(seq.size()) - 1 >= ctx) break;  // no slot left for it: it was the last token
        m.forward(TokenBlock::causal(int(seq.size()) - 1, {t}));
        row = 0;
    }
    return out;
}

}  // namespace medusa::test
