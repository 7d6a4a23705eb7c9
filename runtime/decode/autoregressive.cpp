#include "decode/autoregressive.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace medusa {

namespace {
double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int prefill(LanguageModel& model, const std::vector<int>& prompt) {
    if (prompt.empty()) throw std::invalid_argument("the prompt has no tokens (it needs at least BOS)");
    const int ctx = model.config().seq_len;
    if (int(prompt.size()) > ctx)
        throw std::invalid_argument("the prompt has " + std::to_string(prompt.size()) +
                                    " tokens, more than the context of " + std::to_string(ctx));
    int last = 0;
    for (size_t start = 0; start < prompt.size(); start += TokenBlock::kMaxTokens) {
        const size_t end = std::min(prompt.size(), start + TokenBlock::kMaxTokens);
        TokenBlock block = TokenBlock::causal(int(start), {prompt.begin() + start, prompt.begin() + end});
        model.forward(block);
        last = int(end - start) - 1;
    }
    return last;
}

GenerationStats generate_autoregressive(LanguageModel& model, const std::vector<int>& prompt,
                                        const GenerationOptions& options,
                                        const std::function<bool(int)>& on_token) {
    GenerationStats stats;
    stats.prompt_tokens = int(prompt.size());
    Sampler sampler(options.sampling);
    auto t0 = std::chrono::steady_clock::now();
    int row = prefill(model, prompt);
    stats.prefill_ms = ms_since(t0);

    t0 = std::chrono::steady_clock::now();
    int pos = int(prompt.size());
    std::vector<int> history = prompt;  // for the repetition penalty
    stats.stop_reason = "length";
    while (stats.new_tokens < options.max_new_tokens) {
        const int token = sampler.greedy() && !sampler.penalizes() ? model.argmax(row)
                                                                    : sampler.sample(model.logits(row), history);
        history.push_back(token);
        if (std::find(options.stop_tokens.begin(), options.stop_tokens.end(), token) != options.stop_tokens.end()) {
            stats.stop_reason = "stop-token";
            break;
        }
        ++stats.new_tokens;
        if (!on_token(token)) {
            stats.stop_reason = "cancelled";
            break;
        }
        if (stats.new_tokens == options.max_new_tokens) break;
        if (pos >= model.config().seq_len) {
            stats.stop_reason = "context";
            break;
        }
        model.forward(TokenBlock::causal(pos, {token}));
        ++stats.forward_passes;
        row = 0;
        ++pos;
    }
    stats.decode_ms = ms_since(t0);
    return stats;
}

}  // namespace medusa
