// How far drafts were accepted, depth by depth: of the steps that drafted a guess k tokens ahead,
// the share whose accepted path reached depth k (Medusa's head k, EAGLE's level k, the k-th token
// of a draft or of an n-gram). `bench` prints it per mode; the app draws it as bars.
#pragma once
#include <vector>

#include "decode/step_trace.h"

namespace medusa {

struct DepthAcceptance {
    std::vector<long> drafted;  // [k-1]: steps with a guess at depth k
    std::vector<long> reached;  // [k-1]: of them, steps that accepted k or more guesses
    void add(const StepTrace& step);
    double rate(int k) const { return drafted[size_t(k - 1)] ? double(reached[size_t(k - 1)]) / drafted[size_t(k - 1)] : 0.0; }
    int depth() const { return int(drafted.size()); }
};

}  // namespace medusa
