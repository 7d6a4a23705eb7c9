// Every way of decoding is this one loop: the drafter proposes a candidate tree, the verifier
// runs it through the target and keeps what the acceptance rule accepts, and the emitted tokens
// are cut at stop tokens and at the budget. Plain decoding is the loop with NoDrafter.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "decode/acceptance.h"
#include "decode/drafter.h"
#include "decode/sampler.h"
#include "decode/step_trace.h"
#include "decode/verifier.h"
#include "llm/tree_runner.h"

namespace medusa {

struct DecodeOptions {
    int max_new_tokens = 256;
    // Temperature 0 is greedy decoding; top-k, top-p and the repetition penalty shape the target's
    // p (and a drafter's q) in every mode; the seed starts the generation's one random stream.
    SamplingParams sampling{0.0f, 1.0f, 0};
    AcceptRule rule = AcceptRule::Sample;  // used when the temperature is above 0
    TypicalParams typical;
    std::vector<int> stop_tokens;  // generation ends at one of these (it is not emitted)
    int logprobs = -1;  // >= 0: each emitted token's log-probability and this many likeliest (StepTrace::logprobs)
};

struct GenerationStats {
    int prompt_tokens = 0;
    int new_tokens = 0;
    int steps = 0;        // verify passes of the target, the first token's included
    long drafted = 0;     // depth of each proposed tree, summed: tokens the drafter could have given
    int drafted_steps = 0;  // steps that verified a draft (the step controller may decode plainly)
    long accepted = 0;    // drafted tokens accepted
    long submits = 0;     // queue submits while decoding (verify passes and the drafter's own)
    double prefill_ms = 0;
    double decode_ms = 0;
    StopReason stop_reason = StopReason::Length;
    double decode_tokens_per_s() const { return decode_ms > 0 ? new_tokens * 1000.0 / decode_ms : 0; }
    double tokens_per_step() const { return steps ? double(new_tokens) / steps : 0; }  // tau
    double acceptance() const { return drafted ? double(accepted) / drafted : 0; }     // alpha
    double submits_per_step() const { return steps ? double(submits) / steps : 0; }
    // Another generation's counts and times added (runs of a benchmark, a request's choices); the
    // prompt stays this one's, the stop reason becomes the other's.
    void add(const GenerationStats& other);
};

class SpeculativeDecoder {
public:
    SpeculativeDecoder(TreeRunner& runner, Drafter& drafter, DecodeOptions options);
    // on_step sees every step after its emitted tokens were cut; returning false stops.
    GenerationStats generate(const std::vector<int>& prompt, const std::function<bool(const StepTrace&)>& on_step);
    void reseed(uint64_t seed) { options_.sampling.seed = seed; }
    const DecodeOptions& options() const { return options_; }
    const AcceptanceRule& rule() const { return *rule_; }
    // Replaces the acceptance rule (the tests' deliberately broken variants).
    void set_rule(std::unique_ptr<AcceptanceRule> rule);
    Drafter& drafter() { return drafter_; }

private:
    void prepare_blocks();
    TreeRunner& runner_;
    Drafter& drafter_;
    DecodeOptions options_;
    std::unique_ptr<AcceptanceRule> rule_;
    Verifier verifier_;
};

}  // namespace medusa
