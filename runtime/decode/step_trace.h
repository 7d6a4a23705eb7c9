// What one decoding step did, as the CLI's --trace file and the desktop app show it.
#pragma once
#include <string>
#include <vector>

namespace medusa {

// SampleWithoutResidual is deliberately wrong (bonus from the full distribution instead of the
// residual): tests use it to show that the losslessness check can fail.
enum class AcceptRule { Greedy, Typical, Sample, SampleWithoutResidual };
const char* accept_rule_name(AcceptRule r);
AcceptRule parse_accept_rule(const std::string& s);  // throws std::invalid_argument

struct TreeNodeTrace {
    int token = 0;
    int parent = -1;
    int depth = 0;
    int rank = 0;             // the head's top-k rank that proposed it
    float head_prob = 1.0f;   // the head's probability of the token
    float model_prob = 1.0f;  // the model's probability of it at its parent (rule's temperature)
    float limit = 0.0f;       // typical acceptance threshold at its parent
    bool passes = false;      // meets the acceptance rule given its parent
    bool tried = false;       // visited by speculative sampling
    bool accepted = false;    // on the accepted path
};

struct StepTrace {
    int step = 0;
    int base = 0;  // cache slot of the root
    std::vector<TreeNodeTrace> nodes;  // node 0 is the root
    std::vector<int> path;             // accepted node indices, root first
    int accepted = 0;                  // accepted candidate tokens (root excluded)
    int bonus = 0;                     // the model's own token after them
    std::vector<int> emitted;          // tokens this step added to the output
    std::vector<std::pair<std::string, double>> stage_ms;
    double wall_ms = 0;
    std::string to_json() const;
};

}  // namespace medusa
