#include "depth_acceptance.h"

#include <algorithm>

namespace medusa::chat {

DepthAcceptance depth_acceptance(const std::vector<const StepRecord*>& steps) {
    DepthAcceptance a;
    for (const StepRecord* s : steps) {
        int deepest = 0;
        for (const auto& n : s->trace.nodes) deepest = std::max(deepest, n.depth);
        if (deepest > a.depth()) a.drafted.resize(size_t(deepest), 0), a.reached.resize(size_t(deepest), 0);
        for (int k = 1; k <= deepest; ++k) {
            ++a.drafted[size_t(k - 1)];
            a.reached[size_t(k - 1)] += s->trace.accepted >= k;
        }
    }
    return a;
}

}  // namespace medusa::chat
