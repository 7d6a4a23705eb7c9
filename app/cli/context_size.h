// --ctx-size N (-c N, and bench's older --context): how many positions the KV cache holds.
// Without it a command takes what it needs (choose_context), never more than the model was
// trained for; with it, more than that is allowed with a warning, as llama.cpp does.
#pragma once
#include "args.h"
#include "llm/context_length.h"
#include "model/model_file.h"

namespace medusa::cli {

// `needed`: the positions the command will use, when it knows (generate: the prompt, the new
// tokens and one verified block); 0: kDefaultContext.
int context_size(const Args& args, const ModelFile& model, int needed = 0);

// The positions for a draft model beside a target decoding `target_context` positions: as many,
// up to the draft's own trained context.
int draft_context_size(int target_context, const LlamaConfig& draft);

}  // namespace medusa::cli
