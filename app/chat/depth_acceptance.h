// How far a turn's drafts were accepted, depth by depth: of the steps that drafted a guess k
// tokens ahead, the share whose accepted path reached depth k (Medusa's head k, EAGLE's level k,
// the k-th token of a draft or of an n-gram). The metrics panel draws it as bars.
#pragma once
#include <vector>

#include "step_log.h"

namespace medusa::chat {

struct DepthAcceptance {
    std::vector<int> drafted;  // [k-1]: steps with a guess at depth k
    std::vector<int> reached;  // [k-1]: of them, steps that accepted k or more guesses
    double rate(int k) const { return drafted[k - 1] ? double(reached[k - 1]) / drafted[k - 1] : 0.0; }
    int depth() const { return int(drafted.size()); }
};

DepthAcceptance depth_acceptance(const std::vector<const StepRecord*>& steps);

}  // namespace medusa::chat
