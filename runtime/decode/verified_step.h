// What one verify pass accepted: the path, its tokens and the bonus, with the tree as it ran (a
// device-drafted tree carries the tokens the pass drafted) and the rule's reasons per node.
#pragma once
#include <vector>

#include "decode/acceptance.h"
#include "decode/candidate_tree.h"
#include "decode/token_logprobs.h"

namespace medusa {

struct VerifiedStep {
    int base = 0;             // cache slot of the root
    CandidateTree tree;       // as verified
    Verdict verdict;          // path (root first), bonus, each node's verdict
    std::vector<int> tokens;  // the path's tokens after the root, then the bonus: what the step emits
    std::vector<TokenLogprobs> logprobs;  // of each of `tokens`, when asked for (Verifier::set_logprobs)
    int accepted() const { return int(verdict.path.size()) - 1; }  // drafted tokens accepted
};

}  // namespace medusa
