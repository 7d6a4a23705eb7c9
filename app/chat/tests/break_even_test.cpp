// The break-even of a shaped step and a turn's predicted and measured speed-up, from the step
// controller's account.
#include <catch2/catch.hpp>

#include "break_even.h"

using namespace medusa;
using namespace medusa::chat;

namespace {

// A step that chose a shape costing `ms` against plain's 2 ms, expecting `expected` tokens,
// emitting `got` in `wall` ms.
StepTrace shaped(double ms, double expected, int got, double wall) {
    StepTrace t;
    ControlTrace c;
    c.weighed.push_back({DrafterKind::Plain, 1, 0, 1.0, 2.0});
    c.weighed.push_back({DrafterKind::Medusa, 5, 2, expected, ms});
    c.chosen = 1;
    c.reason = ControlReason::Pays;
    t.control = c;
    t.emitted.assign(size_t(got), 7);
    t.wall_ms = wall;
    return t;
}

}  // namespace

TEST_CASE("a shaped step breaks even at its cost in plain steps", "[chat]") {
    const auto b = break_even(shaped(3.0, 2.4, 3, 3.1));
    REQUIRE(b);
    CHECK(b->tokens == Approx(1.5));  // 3 ms against a 2 ms plain step
    CHECK(b->expected == Approx(2.4));
    CHECK(b->got == 3);
    CHECK(b->paid());
    CHECK_FALSE(break_even(shaped(3.0, 2.4, 1, 3.1))->paid());
    CHECK_FALSE(break_even(StepTrace{}));  // a fixed-shape step has no account
}

TEST_CASE("a turn's predicted speed-up comes from the shaped steps", "[chat]") {
    const StepTrace a = shaped(3.0, 2.4, 3, 3.0), b = shaped(3.0, 2.4, 1, 3.0), fixed;
    const TurnSpeedup s = turn_speedup({&a, &b, &fixed});
    CHECK(s.steps == 2);
    // Plain: 1 token per 2 ms. Predicted: 4.8 tokens in 6 ms = 0.8/ms, 1.6x.
    CHECK(s.predicted == Approx(1.6));
    CHECK(turn_speedup({&fixed}).steps == 0);
}

TEST_CASE("a step drafted where plain decoding would have paid says what it saved or lost", "[chat]") {
    StepTrace gained = shaped(3.0, 1.2, 2, 3.0), lost = shaped(3.0, 1.2, 1, 3.0), paid = shaped(3.0, 2.4, 3, 3.0);
    gained.control->reason = lost.control->reason = ControlReason::DraftedAnyway;
    // 3 ms buys 1.5 plain steps of 2 ms: 2 tokens saved half a step's 2 ms, 1 token lost as much.
    CHECK(drafted_anyway_outcome(gained) ==
          "It gave 2 tokens in the time plain decoding takes for 1.5: about 1.0 ms saved against plain decoding (by "
          "the controller's costs).");
    CHECK_THAT(drafted_anyway_outcome(lost), Catch::Contains("It gave 1 token in") && Catch::Contains("1.0 ms lost"));
    CHECK(drafted_anyway_outcome(paid).empty());  // the controller's own choice needs no such line
    const DraftedAnyway d = drafted_anyway({&gained, &lost, &paid});
    CHECK(d.steps == 2);
    CHECK(d.saved_ms == Approx(0.0));
}
