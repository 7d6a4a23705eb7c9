// Classic draft-model speculative decoding (Leviathan et al.): a small draft model proposes a
// chain of gamma tokens autoregressively, the target verifies [root, x1..xgamma] as one causal
// block in one forward pass, and greedy matching or lossless rejection sampling decides how
// many to keep. A chain verified causally needs no KV compaction: block token t sits in cache
// slot base+t, so the accepted prefix is already in place and the next block overwrites the rest.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "decode/autoregressive.h"
#include "decode/step_trace.h"
#include "llm/language_model.h"

namespace medusa {

enum class DraftRule {
    Greedy,  // accept while the drafted token is the target's argmax
    Sample,  // accept x with probability min(1, p(x)/q(x)); resample from norm(max(0, p - q))
    // Deliberately wrong (resamples from p instead of the residual): tests show the
    // losslessness check catches it. Not reachable from the CLI.
    SampleWithoutResidual,
};
const char* draft_rule_name(DraftRule r);
DraftRule parse_draft_rule(const std::string& s);  // "greedy" | "sample"; throws std::invalid_argument

struct DraftOptions {
    int gamma = 4;              // drafted tokens per step (the start value when adaptive)
    bool adaptive_gamma = false;  // +1 after full acceptance, -1 after a rejection in the first half
    int min_gamma = 1, max_gamma = 16;
    DraftRule rule = DraftRule::Greedy;
    // Applied to p and q alike (Sampler::distribution over the same context): temperature, top-k,
    // top-p, and the repetition penalty, which greedy matching honours too.
    float temperature = 0.0f;
    float top_p = 1.0f;
    int top_k = 0;
    float repeat_penalty = 1.0f;
    int repeat_last_n = 64;
    uint64_t seed = 0;
    int max_new_tokens = 256;
    std::vector<int> stop_tokens;
};

// Throws std::invalid_argument naming both models unless the draft's vocabulary matches.
void check_draft_compatible(const LlamaConfig& target, const LlamaConfig& draft, const std::string& target_name,
                            const std::string& draft_name);

struct DraftStats {
    long steps = 0;           // verify forwards of the target
    long drafted = 0;         // tokens proposed by the draft
    long accepted = 0;        // of those, accepted
    long draft_forwards = 0;  // forward passes of the draft
    double draft_ms = 0, verify_ms = 0;  // wall time spent in each model's forwards
    double alpha() const { return drafted ? double(accepted) / drafted : 0; }
    // Tokens per target forward: accepted plus the resampled/bonus token, per step.
    double tau() const { return steps ? double(accepted + steps) / steps : 0; }
};

class DraftDecoder {
public:
    // Both models must share a tokenizer; a vocabulary size mismatch is refused.
    DraftDecoder(LanguageModel& target, LanguageModel& draft, DraftOptions options);

    // on_step sees every step (the first, from the prompt, has only a root); false stops.
    // GenerationStats::forward_passes counts the target's verify forwards.
    GenerationStats generate(const std::vector<int>& prompt, const std::function<bool(const StepTrace&)>& on_step);
    const DraftStats& draft_stats() const { return dstats_; }  // of the last generate()
    void reseed(uint64_t seed) { options_.seed = seed; }
    int gamma() const { return gamma_; }  // current (adaptive) gamma, reset by generate()

private:
    StepTrace step(int base, int root, int gamma, std::vector<int>& seq);
    int sync_draft(const std::vector<int>& seq, int upto);
    // The rule's distribution of `model`'s block row given the tokens before it (`context`), and
    // its greedy choice (the GPU's argmax unless a repetition penalty reshapes the logits).
    std::vector<float> dist(LanguageModel& model, int row, std::span<const int> context) const;
    int greedy_pick(LanguageModel& model, int row, std::span<const int> context) const;

    LanguageModel& target_;
    LanguageModel& draft_;
    DraftOptions options_;
    Sampler sampler_;
    int gamma_ = 4;
    int draft_valid_ = 0;  // the draft's cache holds seq[0 .. draft_valid_) correctly
    DraftStats dstats_;
};

}  // namespace medusa
