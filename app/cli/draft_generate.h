// `medusa generate --draft-model FILE`: draft-model speculative decoding of the -m target.
#pragma once
#include <string>

#include "args.h"
#include "decode/autoregressive.h"
#include "model/model_file.h"
#include "model/tokenizer.h"

namespace medusa::cli {

// Options: --draft-model FILE, --gamma N (4), --adaptive-gamma, --accept greedy|sample (sample when
// --temp > 0), --trace FILE.jsonl, --cpu. Prints like plain generate; returns the exit code.
int run_draft_generate(const Args& args, const ModelFile& target_file, const Tokenizer& tokenizer,
                       const std::string& prompt, const GenerationOptions& options);

// Loads a draft model and refuses one that cannot draft for `target` (vocabulary, tokenizer).
ModelFile open_draft_model(const std::string& path, const ModelFile& target);

}  // namespace medusa::cli
