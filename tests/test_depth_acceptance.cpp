// Acceptance by depth: a step counts at every depth it drafted to, and as reached up to the
// guesses it accepted.
#include <catch2/catch.hpp>

#include "decode/depth_acceptance.h"

using namespace medusa;

namespace {

// A step whose tree is a chain `depth` deep, `accepted` of its guesses kept.
StepTrace chain(int depth, int accepted) {
    StepTrace t;
    for (int d = 0; d <= depth; ++d) {
        TreeNodeTrace n;
        n.depth = d;
        n.parent = d - 1;
        t.nodes.push_back(n);
    }
    t.accepted = accepted;
    return t;
}

}  // namespace

TEST_CASE("acceptance by depth counts, per depth, the steps that drafted it and those that got there", "[decoding]") {
    DepthAcceptance d;
    for (const StepTrace& s : {chain(3, 3), chain(3, 1), chain(2, 0), chain(0, 0)}) d.add(s);
    REQUIRE(d.depth() == 3);
    CHECK(d.drafted == std::vector<long>{3, 3, 2});
    CHECK(d.reached == std::vector<long>{2, 1, 1});
    CHECK(d.rate(1) == Approx(2.0 / 3));
    CHECK(d.rate(3) == Approx(0.5));
    DepthAcceptance plain;
    plain.add(chain(0, 0));
    CHECK(plain.depth() == 0);
}
