// The prompt every decode timing starts after: BOS, then tokens spread over the vocabulary, so
// that each bench path times decoding at the same cache depth (attention's cost grows with it:
// timing at position 1 left it out, and made synthetic models look faster than files).
#pragma once
#include <vector>

namespace medusa::cli {

constexpr int kBenchPromptTokens = 32;  // bench's --prompt-tokens default

inline std::vector<int> bench_prompt(int vocab_size, int tokens = kBenchPromptTokens) {
    std::vector<int> prompt = {1};
    for (int i = 1; i < tokens; ++i) prompt.push_back((i * 7919 + 3) % vocab_size);
    return prompt;
}

}  // namespace medusa::cli
