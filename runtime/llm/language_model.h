// What decoding needs from a model, whichever engine runs it (GPU, or the CPU reference).
#pragma once
#include <span>

#include "llm/token_block.h"
#include "model/model_file.h"

namespace medusa {

class LanguageModel {
public:
    virtual ~LanguageModel() = default;
    virtual const LlamaConfig& config() const = 0;
    // Runs the block; its K/V land in cache slots base .. base+size-1.
    virtual void forward(const TokenBlock& block) = 0;
    // Builds now what a forward of `n_tokens` needs (an engine's recorded commands), so that
    // decoding never pays for it. Engines with nothing to build do nothing.
    virtual void prepare(int n_tokens) { (void)n_tokens; }
    // Results of the last forward, for block token t.
    virtual std::span<const float> logits(int t) = 0;
    virtual int argmax(int t) = 0;
    virtual const char* engine_name() const = 0;
};

}  // namespace medusa
