// "Measure speedup vs plain": the last turn's prompt decoded again in its mode and plainly, round by
// round; the result keeps each round's own ratio (the spread the panel shows), and under greedy
// acceptance both texts are the same token for token.
#include <catch2/catch.hpp>

#include "decode_worker.h"
#include "worker_fixture.h"

using namespace medusa;
using namespace medusa::chat;
using medusa::chat::test::context;

TEST_CASE("the speedup measurement keeps every round's ratio and the greedy texts agree", "[chat]") {
    DecodeSettings s;
    s.mode = DrafterKind::Medusa;
    set_tree_field(s, "chain:2");
    s.fixed_shape = true;
    s.max_new_tokens = 16;
    StepLog log;
    DecodeWorker worker(context(), log);
    REQUIRE(worker.generate("Once upon a time", s));
    worker.wait_idle();
    REQUIRE(worker.last_error().empty());
    StepLogReader reader;
    reader.poll(log);
    REQUIRE(reader.turns().size() == 1);
    REQUIRE(worker.measure_speedup("Once upon a time", s, reader.turns()[0].new_tokens, reader.turns()[0].id));
    worker.wait_idle();
    INFO(worker.last_error());
    const SpeedupResult r = worker.speedup();
    REQUIRE(r.valid);
    REQUIRE(r.round_speedups.size() == size_t(SpeedupResult::kRounds));
    for (double x : r.round_speedups) CHECK(x > 0);
    CHECK(r.identical);
    CHECK(r.tokens == r.plain_tokens);
    reader.poll(log);
    CHECK(reader.turns().size() == 1);  // nothing entered the chat
}
