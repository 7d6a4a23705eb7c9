// One speed per turn: the metrics' line, the table of turns and the screenshot's JSON count the
// same thing, the turn's new tokens over its decoding time with the prompt's prefill left out
// (the live figure counted the prefill too: 2,800 tokens/s against the table's 5,200); the
// timeline's measured speed-up is the measurement's, for the turn it measured.
#include <catch2/catch.hpp>

#include <string>

#include "chat_app.h"
#include "turn_speed.h"
#include "worker_fixture.h"

using namespace medusa;
using namespace medusa::chat;
using medusa::chat::test::context;
using medusa::chat::test::decode_turn;

TEST_CASE("a turn's speed leaves the prompt's prefill out, alike live and finished", "[chat][speed]") {
    DecodeSettings s;
    s.mode = DrafterKind::Plain;
    s.max_new_tokens = 6;
    std::string prompt;
    for (int i = 0; i < 24; ++i) prompt += "Once upon a time there was a little dog. ";  // a long prefill
    const StepLogReader reader = decode_turn(s, prompt);
    const TurnRecord& turn = reader.turns()[0];
    REQUIRE(turn.done);
    CHECK(turn.prefill_ms > 0);
    // The steps are timed from the first one's start, as the decoder's decode_ms: the last step's
    // time is within it (the prefill before it counted, it was far past it).
    CHECK(reader.steps().back().t_ms <= turn.decode_ms + 0.05);
    const TurnSpeed done = turn_speed(turn, reader.steps());
    CHECK(done.tokens_per_s() == Approx(turn.new_tokens * 1000.0 / turn.decode_ms));
    TurnRecord live = turn;
    live.done = false;  // as the panel sees it while decoding
    const TurnSpeed so_far = turn_speed(live, reader.steps());
    CHECK(so_far.tokens == turn.new_tokens);
    CHECK(so_far.decode_ms == reader.steps().back().t_ms);
    CHECK(so_far.tokens_per_s() >= done.tokens_per_s());  // the same count, the callbacks after the last step aside
}

TEST_CASE("the timeline's measured speed-up is the measurement of its turn", "[chat][speed]") {
    ChatApp app(context());
    app.keep_chats = false;
    app.settings.mode = DrafterKind::Ngram;
    app.settings.max_new_tokens = 16;
    REQUIRE(app.send("Lily had a red ball. She liked to play with it. Lily had a red ball. She liked to"));
    app.worker.wait_idle();
    app.poll();
    const TurnRecord turn = app.reader.turns().back();
    CHECK_FALSE(timeline_speedup(turn, app.reader.steps(), app.worker.speedup()).measured);  // not measured yet
    REQUIRE(app.measure_speedup());
    app.worker.wait_idle();
    const SpeedupResult m = app.worker.speedup();
    REQUIRE(m.valid);
    const TimelineSpeedup t = timeline_speedup(turn, app.reader.steps(), m);
    REQUIRE(t.measured);
    CHECK(*t.measured == m.speedup());
    CHECK(t.shaped_steps == int(app.reader.steps().size()));
    TurnRecord other = turn;
    other.id += 1;  // a later turn: not what was measured
    CHECK_FALSE(timeline_speedup(other, app.reader.steps(), m).measured);
}
