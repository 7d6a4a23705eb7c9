#include "decode/depth_acceptance.h"

#include <algorithm>

namespace medusa {

void DepthAcceptance::add(const StepTrace& step) {
    int deepest = 0;
    for (const auto& n : step.nodes) deepest = std::max(deepest, n.depth);
    if (deepest > depth()) drafted.resize(size_t(deepest), 0), reached.resize(size_t(deepest), 0);
    for (int k = 1; k <= deepest; ++k) {
        ++drafted[size_t(k - 1)];
        reached[size_t(k - 1)] += step.accepted >= k;
    }
}

}  // namespace medusa
