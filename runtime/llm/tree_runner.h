// What speculative decoding needs from a target model, whatever engine runs it: the prompt
// prefilled causally, one forward over a candidate tree (after a drafter's device stage, in the
// same submit), the accepted path kept in the cache, and the results read back. runtime/decode
// drives every decoding mode through this interface and never sees a GPU buffer.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "llm/draft_stage.h"
#include "llm/eagle_layer.h"
#include "llm/eagle_runner.h"
#include "llm/medusa_heads.h"
#include "llm/token_block.h"
#include "model/model_file.h"

namespace medusa {

// Of softmax(logits / T) at one node: what the acceptance rules need without reading the row.
struct NodeStats {
    float log_normalizer = 0;  // log sum exp(logits / T)
    float entropy = 0;         // -sum p log(p + 1e-5), as FasterDecoding/Medusa computes it
};

struct TreeRunOptions {
    const DraftStage* stage = nullptr;  // drafts block tokens 1.. before the forward
    bool stats = false;                 // NodeStats of every node at `temperature`
    float temperature = 1.0f;
};

class TreeRunner {
public:
    virtual ~TreeRunner() = default;
    virtual const LlamaConfig& config() const = 0;
    virtual const char* engine_name() const = 0;

    // Slots [0, n) of the cache hold the final entries of these tokens.
    virtual std::span<const int> cached_tokens() const = 0;
    // Of the first `shared` cached tokens a new prompt begins with, how many it may keep: all, or
    // none where a local layer's ring no longer holds the window before them.
    virtual int reusable_prefix(int shared) const { return shared; }
    // Runs `tokens` causally into slots [base, base + n), in blocks of at most kMaxTokens.
    virtual void prefill(int base, std::span<const int> tokens) = 0;
    // One forward over `block` (a candidate tree: its mask holds each node's ancestors). With a
    // stage, the block's tokens 1.. are the stage's drafts, whatever the block says.
    virtual void run(const TokenBlock& block, const TreeRunOptions& options) = 0;

    // Records, without running it, what a run of `n_tokens` after `stage` holds (with statistics
    // where it has more than one token), so its pipelines are built now, before the first token,
    // rather than in the first steps (a CPU driver compiles each for tens of milliseconds).
    // Engines without pipelines have nothing to do.
    virtual void prepare(int n_tokens, const DraftStage* stage) {
        (void)n_tokens;
        (void)stage;
    }

    // Results of the last run(): the tokens it ran with, and per block node the greedy token,
    // the logits, the stats (when asked for) and the stage's probability of the node's token.
    virtual std::span<const int> tokens() const = 0;
    virtual int argmax(int node) = 0;
    virtual std::span<const float> logits(int node) = 0;
    virtual NodeStats stats(int node) const = 0;
    virtual std::span<const float> draft_probs() const = 0;  // empty without a stage
    // Per-stage GPU time of the last run (empty unless the runner measures it).
    virtual std::vector<std::pair<std::string, double>> stage_ms() const = 0;

    // Keeps the last run's accepted path (block indices, root first, increasing) in the cache at
    // slots base, base + 1, ...; engines may fold the move into their next submit. The last
    // path node's hidden state is what a stage drafts from next.
    virtual void keep_path(std::span<const int> path) = 0;

    // Queue submits so far (the CPU reference counts its forwards).
    virtual uint64_t submits() const = 0;

    // A stage that drafts with Medusa heads from the last kept node's hidden state: the heads'
    // top-`topk` candidates form the list [root, head 0's, head 1's, ...] and tree node i takes
    // entry candidate[i] (0 for the root).
    virtual std::unique_ptr<DraftStage> medusa_stage(const ModelFile& file, const MedusaHeads& heads, int depth,
                                                     int topk, std::span<const int> candidate) = 0;

    // EAGLE's draft layer on this engine, reading this target's features, embeddings and LM head.
    virtual std::unique_ptr<EagleRunner> eagle_runner(const ModelFile& file, const EagleLayer& layer) = 0;
};

}  // namespace medusa
