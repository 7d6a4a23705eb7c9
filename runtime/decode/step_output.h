// What a speculative step (Medusa, draft model) hands to its caller: the tokens it emitted, cut
// at the first stop token and at the token budget, shared so the strategies stop alike.
#pragma once
#include <vector>

#include "decode/autoregressive.h"

namespace medusa {

// Keeps `emitted` up to the first stop token (not emitted; it ends the generation) and the
// budget of max_new_tokens; adds the kept ones to stats.new_tokens. Returns false when a stop
// token ended the generation (stats.stop_reason says so).
bool keep_step_tokens(std::vector<int>& emitted, const std::vector<int>& stop_tokens, int max_new_tokens,
                      GenerationStats& stats);

}  // namespace medusa
