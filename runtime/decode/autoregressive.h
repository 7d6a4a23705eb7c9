// Plain decoding: prefill the prompt in causal blocks, then one token per forward pass.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "decode/sampler.h"
#include "llm/language_model.h"

namespace medusa {

struct GenerationOptions {
    int max_new_tokens = 256;
    SamplingParams sampling;
    std::vector<int> stop_tokens;  // generation ends after emitting none of these (they are not emitted)
};

struct GenerationStats {
    int prompt_tokens = 0;
    int new_tokens = 0;
    int forward_passes = 0;  // decode passes, prefill excluded
    double prefill_ms = 0;
    double decode_ms = 0;
    std::string stop_reason;  // "length", "stop-token", "context", "cancelled"
    double decode_tokens_per_s() const { return decode_ms > 0 ? new_tokens * 1000.0 / decode_ms : 0; }
};

// Fills the cache with `prompt` (chunked to the block limit); returns the logits' owner index
// of the last prompt token, i.e. the block position to read the next-token logits from.
int prefill(LanguageModel& model, const std::vector<int>& prompt);

// on_token returns false to stop early.
GenerationStats generate_autoregressive(LanguageModel& model, const std::vector<int>& prompt,
                                        const GenerationOptions& options,
                                        const std::function<bool(int)>& on_token);

}  // namespace medusa
