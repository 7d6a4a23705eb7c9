// Acceptance by depth: a step counts at every depth it drafted to, and as reached up to the
// guesses it accepted.
#include <catch2/catch.hpp>

#include "depth_acceptance.h"

using namespace medusa;
using namespace medusa::chat;

namespace {

// A step whose tree is a chain `depth` deep, `accepted` of its guesses kept.
StepRecord chain(int depth, int accepted) {
    StepRecord r;
    for (int d = 0; d <= depth; ++d) {
        TreeNodeTrace n;
        n.depth = d;
        n.parent = d - 1;
        r.trace.nodes.push_back(n);
    }
    r.trace.accepted = accepted;
    return r;
}

}  // namespace

TEST_CASE("acceptance by depth counts, per depth, the steps that drafted it and those that got there", "[chat]") {
    const StepRecord a = chain(3, 3), b = chain(3, 1), c = chain(2, 0), plain = chain(0, 0);
    const DepthAcceptance d = depth_acceptance({&a, &b, &c, &plain});
    REQUIRE(d.depth() == 3);
    CHECK(d.drafted == std::vector<int>{3, 3, 2});
    CHECK(d.reached == std::vector<int>{2, 1, 1});
    CHECK(d.rate(1) == Approx(2.0 / 3));
    CHECK(d.rate(3) == Approx(0.5));
    CHECK(depth_acceptance({&plain}).depth() == 0);
}
