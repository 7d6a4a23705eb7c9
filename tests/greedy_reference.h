// Plain greedy decoding, the reference every speculative strategy must reproduce token for token.
#pragma once
#include <vector>

#include "decode/autoregressive.h"

namespace medusa::test {

inline std::vector<int> greedy_ar(LanguageModel& m, const std::vector<int>& prompt, int n) {
    GenerationOptions o;
    o.max_new_tokens = n;
    o.sampling.temperature = 0;
    std::vector<int> out;
    generate_autoregressive(m, prompt, o, [&](int t) { return out.push_back(t), true; });
    return out;
}

}  // namespace medusa::test
