// Errors and notes stand next to Send, where the user looks after pressing it: a mode without the
// file it needs is refused at once with a line saying which (EAGLE with no layer did nothing
// visible), the worker's error shows there too, and the message stays in the box.
#include <catch2/catch.hpp>

#include <algorithm>

#include "chat_app.h"
#include "headless_frame.h"
#include "worker_fixture.h"

using namespace medusa;
using namespace medusa::chat;
using medusa::chat::test::context;
using medusa::chat::test::HeadlessFrames;

namespace {

bool drawn(const ChatApp& app, const std::string& part) {
    return std::any_of(app.notes_drawn.begin(), app.notes_drawn.end(),
                       [&](const std::string& n) { return n.find(part) != std::string::npos; });
}

}  // namespace

TEST_CASE("a Send the settings cannot decode says why next to Send", "[chat][notes]") {
    ChatApp app(context());
    app.keep_chats = false;
    app.settings.mode = DrafterKind::Eagle;
    app.settings.eagle.layer.clear();
    app.input = "Once upon a time";
    HeadlessFrames frames;
    CHECK_FALSE(app.send(app.input));
    CHECK_FALSE(app.worker.busy());
    frames.chat_panel(app, 1024, 700);
    CHECK(drawn(app, "EAGLE needs its draft layer"));
    CHECK(app.input == "Once upon a time");

    // A layer that is not there: the worker's error, next to Send as well.
    app.settings.eagle.layer = "/nonexistent/eagle-layer";
    REQUIRE(app.send(app.input));
    app.input.clear();  // as the Send button does
    app.worker.wait_idle();
    app.poll();
    REQUIRE_FALSE(app.worker.last_error().empty());
    frames.chat_panel(app, 1024, 700);
    CHECK(drawn(app, app.worker.last_error()));
    CHECK_FALSE(drawn(app, "EAGLE needs its draft layer"));  // the refusal before is gone
    CHECK(app.reader.turns().empty());
    CHECK(app.input == "Once upon a time");  // refused by the worker: back in the box

    // A file left out (made for another model) is a note there, not only in Controls.
    app.drop_note = "Left out: heads trained for stories260K, not llama2xs.bin";
    frames.chat_panel(app, 1024, 700);
    CHECK(drawn(app, "Left out: heads trained for stories260K"));
}
