// What one speculative step did, as the CLI's --trace file and the desktop app show it.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "decode/decoding_kinds.h"
#include "decode/step_plan.h"
#include "decode/token_logprobs.h"

namespace medusa {

struct TreeNodeTrace {
    int token = 0;
    int parent = -1;
    int depth = 0;
    int rank = 0;             // among its siblings (a Medusa head's top-k rank)
    float draft_prob = 1.0f;  // the drafter's probability of the token (q)
    float model_prob = 1.0f;  // the target's probability of it at its parent (the rule's distribution)
    float limit = 0.0f;       // typical acceptance threshold at its parent
    int parent_greedy = -1;   // greedy rule: the target's own choice at its parent
    float draw = -1.0f;       // sampling: the uniform u drawn for it (-1: none)
    float ratio = 0.0f;       // sampling: r(x)/q(x) when tried (r: what was left of p); accepted when u < ratio
    bool sampled = false;     // drawn from q (its ratio p/q decided), not chosen deterministically
    bool passes = false;      // meets the acceptance rule given its parent (sample: accepted when tried)
    bool tried = false;       // its test happened (speculative sampling stops at an accepted sibling)
    bool accepted = false;    // on the accepted path
};

// At a sampled step's rejection, one token of the distributions the app draws: the target's p at
// the node whose drafts were all rejected, the drafter's q there, and the residual norm(max(0, p -
// q)) (after every rejection there) that the model's own token was drawn from.
struct RejectionBar {
    int token = 0;
    float p = 0, q = 0, residual = 0;
};

struct StepTrace {
    int step = 0;
    int base = 0;  // cache slot of the root
    DrafterKind drafter = DrafterKind::Plain;
    AcceptRule rule = AcceptRule::Greedy;
    std::vector<TreeNodeTrace> nodes;  // node 0 is the root
    std::vector<int> path;             // accepted node indices, root first
    int accepted = 0;                  // accepted candidate tokens (root excluded)
    int bonus = 0;                     // the model's own token after them
    std::vector<int> emitted;          // tokens this step added to the output
    std::vector<TokenLogprobs> logprobs;  // of each emitted token, when DecodeOptions::logprobs asks
    std::vector<std::pair<std::string, double>> stage_ms;
    double wall_ms = 0;  // the drafter's proposal and the verify pass
    int submits = 0;  // queue submits of the step, the drafter's included
    // Under the step controller: the shapes it weighed and the one it chose.
    std::optional<ControlTrace> control;
    // Speculative sampling that rejected every draft at a node: the tokens weighing most in p, q
    // or the residual there (at most kRejectionBars, the drawn token and the rejected ones among them).
    std::vector<RejectionBar> rejection;
    static constexpr int kRejectionBars = 8;
    std::string to_json() const;
};

}  // namespace medusa
