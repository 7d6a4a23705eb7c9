// Regenerate replaces the last reply: its turn leaves the log (and so the history a chat model is
// given) and a new draw takes its place, as chat apps do.
#include <catch2/catch.hpp>

#include "chat_app.h"
#include "worker_fixture.h"

using namespace medusa;
using namespace medusa::chat;
using medusa::chat::test::context;

TEST_CASE("Regenerate replaces the last reply instead of adding a turn", "[chat]") {
    ChatApp app(context());
    app.settings.mode = DrafterKind::Plain;
    app.settings.rule = AcceptRule::Sample;
    app.settings.sampling.temperature = 1.0f;
    app.settings.max_new_tokens = 12;
    REQUIRE(app.send("Once upon a time"));
    app.worker.wait_idle();
    app.poll();
    REQUIRE(app.reader.turns().size() == 1);
    const uint64_t seed = app.settings.sampling.seed;
    app.regenerate();
    app.worker.wait_idle();
    app.poll();
    REQUIRE(app.reader.turns().size() == 1);  // replaced, not appended
    CHECK(app.reader.turns()[0].prompt == "Once upon a time");
    CHECK(app.reader.turns()[0].done);
    CHECK(app.settings.sampling.seed == seed + 1);  // another draw
    for (const StepRecord& r : app.reader.steps()) CHECK(r.turn == app.reader.turns()[0].id);
}

TEST_CASE("Edit takes the last message back to change and send again, and its reply goes", "[chat]") {
    ChatApp app(context());
    app.settings.mode = DrafterKind::Plain;
    app.settings.max_new_tokens = 8;
    REQUIRE(app.send("Once upon a time"));
    app.worker.wait_idle();
    app.poll();
    REQUIRE(app.send("The dog"));
    app.worker.wait_idle();
    app.poll();
    REQUIRE(app.reader.turns().size() == 2);
    // The context holds the last turn's prompt and reply, of the cache the model was loaded with.
    CHECK(app.worker.context_size() > 0);
    const StepTrace& last = app.reader.steps().back().trace;
    CHECK(last.base + 1 + int(last.emitted.size()) <= app.worker.context_size());
    app.input.clear();
    REQUIRE(app.edit_last());
    app.poll();
    CHECK(app.input == "The dog");             // back in the box
    REQUIRE(app.reader.turns().size() == 1);  // its turn and reply are gone
    CHECK(app.reader.turns()[0].prompt == "Once upon a time");
    REQUIRE(app.send("The cat"));
    app.worker.wait_idle();
    app.poll();
    REQUIRE(app.reader.turns().size() == 2);
    CHECK(app.reader.turns()[1].prompt == "The cat");
    CHECK(app.reader.turns()[1].done);
}
