// A message longer than the model's context could hold is refused before it is tokenized (a
// pasted 20 MB text took gigabytes), with a line saying how long it is and what fits; the app goes
// on with the next message.
#include <catch2/catch.hpp>

#include <chrono>

#include "chat_app.h"
#include "worker_fixture.h"

using namespace medusa;
using namespace medusa::chat;
using medusa::chat::test::context;

TEST_CASE("a message longer than the context can hold is refused before tokenizing, naming the sizes", "[chat]") {
    ChatApp app(context());
    app.settings.mode = DrafterKind::Plain;
    app.settings.max_new_tokens = 4;
    const std::string huge(8u << 20, 'a');  // 8 MB of one letter: tokenized whole, hundreds of MB
    const auto start = std::chrono::steady_clock::now();
    REQUIRE(app.send(huge));
    app.worker.wait_idle();
    app.poll();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK_THAT(app.worker.last_error(), Catch::StartsWith("the message is 8388608 bytes: more than the ") &&
                                            Catch::Contains("-token context can hold (at most "));
    CHECK(seconds < 20);  // tokenizing 8 MB took minutes
    // The next message is decoded as usual.
    REQUIRE(app.send("Once upon a time"));
    app.worker.wait_idle();
    app.poll();
    CHECK(app.worker.last_error().empty());
    CHECK(app.reader.turns().back().done);
}
