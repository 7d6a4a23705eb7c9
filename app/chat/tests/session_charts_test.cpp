// The charts tab's session charts: finished turns summed per decoding mode.
#include <catch2/catch.hpp>

#include "session_charts.h"

using namespace medusa;
using namespace medusa::chat;

TEST_CASE("session charts sum finished turns per mode, plain decoding as the reference", "[chat][charts]") {
    std::vector<TurnRecord> turns(4);
    turns[0] = {1, "p", "medusa (tree.json, 4 heads, greedy)", DrafterKind::Medusa, true, StopReason::Length, 60, 20, 30.0};
    turns[1] = {2, "p", "plain decoding", DrafterKind::Plain, true, StopReason::Length, 60, 60, 60.0};
    turns[2] = {3, "p", "medusa (tree.json, 4 heads, typical T=0.7)", DrafterKind::Medusa, true, StopReason::Length, 40, 20, 20.0};
    turns[3] = {4, "p", "draft (q80, gamma 4, greedy)", DrafterKind::DraftModel, false, StopReason::Length, 10, 2, 5.0};  // still running: left out
    const auto charts = session_charts(turns);
    REQUIRE(charts.size() == 2);
    CHECK(charts[0].labels == std::vector<std::string>{"Medusa", "plain"});
    CHECK(charts[0].series[0].values[0] == Approx(100 * 1000.0 / 50));
    CHECK(charts[0].series[0].values[1] == Approx(1000));
    CHECK(charts[0].reference == Approx(1000));
    CHECK(charts[1].series[0].values[0] == Approx(100.0 / 40));
    CHECK(charts[1].series[0].values[1] == Approx(1.0));
    CHECK(session_charts({}).empty());
}
