// A mode the user picks shows its drafter's work: with the app's defaults every step drafts and
// verifies the drafter's proposal, which the step controller shapes but never drops (where it
// would have decoded plainly the step says so); only steps with nothing to draft from decode
// plainly. Before, the controller decoded the draft model's steps plainly on this device.
#include <catch2/catch.hpp>

#include "break_even.h"
#include "worker_fixture.h"

using namespace medusa;
using namespace medusa::chat;
using medusa::chat::test::decode_turn;

TEST_CASE("a picked mode drafts every step it has something to draft for", "[chat][picked]") {
    for (const DrafterKind mode : {DrafterKind::DraftModel, DrafterKind::Medusa}) {
        DecodeSettings s;  // the defaults: the draft model stories260K_q80, untrained heads
        s.mode = mode;
        s.max_new_tokens = 16;
        REQUIRE(s.spec().shaping == StepShaping::AlwaysDraft);
        const StepLogReader reader = decode_turn(s, "Once upon a time");
        int drafted = 0, anyway = 0;
        for (const StepRecord& r : reader.steps()) {
            INFO(drafter_kind_name(mode) << " step " << r.trace.step);
            REQUIRE(r.trace.control);
            const ControlReason why = r.trace.control->reason;
            CHECK(why != ControlReason::NothingPays);  // never dropped for plain decoding
            if (why == ControlReason::NothingDrafted) continue;
            CHECK(r.trace.nodes.size() > 1);
            CHECK(r.trace.drafter == mode);
            ++drafted;
            if (why == ControlReason::DraftedAnyway) {
                ++anyway;
                CHECK_FALSE(drafted_anyway_outcome(r.trace).empty());
            }
        }
        // Only the first step (no hidden state for the heads yet) and the last (no room) have nothing.
        CHECK(drafted >= int(reader.steps().size()) - 2);
        INFO(anyway << " of " << drafted << " drafted where plain decoding was expected to pay");
        CHECK(drafted > 0);
    }
}
