// EAGLE's draft layer on the target's engine, as a drafter drives it: each run is a block of
// (feature, token) pairs, the feature being the target's own at a committed cache slot (its
// final-norm hidden state) or the layer's prediction for an earlier token of this step (a row of
// the output store, numbered in run order since restart()). The layer keeps its own KV cache and
// drafts with the target's embeddings and LM head. No GPU types here: runtime/decode uses it.
#pragma once
#include <cstdint>
#include <span>

#include "llm/token_block.h"

namespace medusa {

class EagleRunner {
public:
    // A source naming the target's feature of cache slot `slot`.
    static int target_slot(int slot) { return -1 - slot; }

    virtual ~EagleRunner() = default;
    virtual int context() const = 0;
    // Before the target reads a prompt: from then on it keeps the features this layer reads (the
    // final-norm hidden state, or EAGLE-3's layer inputs), whatever another layer asked before.
    virtual void attach() {}
    // Forgets the output rows of earlier runs; the next run's rows are numbered from 0.
    virtual void restart() = 0;
    // Runs block token t as the pair (feature source[t], e(block.tokens[t])) at block.positions[t]
    // into the layer's cache slot block.base + t; source[t] >= 0 is an output row, else
    // target_slot(s). Its outputs become the next rows of the store.
    virtual void run(const TokenBlock& block, std::span<const int> source) = 0;
    // Builds now what a run of `n_tokens` needs (see LanguageModel::prepare).
    virtual void prepare(int n_tokens) { (void)n_tokens; }
    // The target's LM head on the prediction of block token t of the last run.
    virtual std::span<const float> logits(int t) = 0;
    virtual int rows() const = 0;  // output rows so far
    virtual uint64_t submits() const = 0;
};

}  // namespace medusa
