// What a speculative step (Medusa, draft model) hands to its caller: the tokens it emitted, cut
// at the first stop token and at the token budget, shared so the strategies stop alike.
#pragma once
#include <functional>
#include <vector>

#include "decode/autoregressive.h"
#include "decode/step_trace.h"

namespace medusa {

// Keeps `emitted` up to the first stop token (not emitted; it ends the generation) and the
// budget of max_new_tokens; adds the kept ones to stats.new_tokens. Returns false when a stop
// token ended the generation (stats.stop_reason says so).
bool keep_step_tokens(std::vector<int>& emitted, const std::vector<int>& stop_tokens, int max_new_tokens,
                      GenerationStats& stats);

// The first token (from the prompt's own logits) as a step of its own: emitted and shown to
// on_step unless it is a stop token or the budget is 0. Sets stats.stop_reason ("length" until
// something else ends it); returns whether generation goes on.
bool emit_first_token(StepTrace& first_step, int first, const std::vector<int>& stop_tokens, int max_new_tokens,
                      GenerationStats& stats, const std::function<bool(const StepTrace&)>& on_step);

}  // namespace medusa
