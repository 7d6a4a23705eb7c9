// The tokens a generation of this model ends at, whatever front end runs it.
#pragma once
#include <span>
#include <vector>

#include "model/format_error.h"
#include "model/tokenizer.h"

namespace medusa {

// The tokenizer's EOS; llama2.c story models also stop at BOS, which separates their stories
// (run.c stops there too); then `more` (a chat template's end-of-turn tokens), each once.
std::vector<int> model_stop_tokens(const ModelFile& file, const Tokenizer& tokenizer, std::span<const int> more = {});

}  // namespace medusa
