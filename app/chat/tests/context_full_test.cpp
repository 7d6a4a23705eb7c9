// A conversation that outgrows the model's context is never cut silently: the message is not
// sent, the chat says so with what can be done (start a new chat with it, or leave the oldest
// turns out of the model's context), the message comes back into the box, and either choice
// then sends it; turns left out stay in the chat, marked, and are no longer given to the model.
#include <catch2/catch.hpp>

#include <filesystem>

#include "chat_app.h"
#include "headless_frame.h"
#include "tiny_gguf.h"
#include "worker_fixture.h"

using namespace medusa;
using namespace medusa::chat;
using medusa::chat::test::context;
using medusa::chat::test::HeadlessFrames;

namespace {

// Sends `message` and waits for the worker; true when it became a turn.
bool send_and_wait(ChatApp& app, const std::string& message) {
    const size_t before = app.reader.turns().size();
    app.input.clear();
    REQUIRE(app.send(message));
    app.worker.wait_idle();
    app.poll();
    return app.reader.turns().size() > before;
}

}  // namespace

TEST_CASE("a conversation past the context is said in the chat, with a new chat or the oldest turns left out",
          "[chat][context]") {
    const std::string chatml = medusa::test::kChatmlTemplate;
    const std::filesystem::path gguf = medusa::test::write_tiny_gguf("app-context", &chatml);
    ChatApp app(context());
    app.keep_chats = false;
    app.settings.model_path = gguf.string();
    app.settings.tokenizer_path.clear();
    app.settings.mode = DrafterKind::Plain;
    app.settings.max_new_tokens = 6;  // 64 positions: a few short turns fit, byte by byte
    int sent = 0;
    while (sent < 8 && send_and_wait(app, "Hi " + std::to_string(sent))) ++sent;
    INFO(app.worker.last_error());
    REQUIRE(sent >= 1);
    REQUIRE(sent < 8);  // the conversation outgrew the context
    const auto full = app.worker.context_full();
    REQUIRE(full);
    CHECK(full->context == 64);
    CHECK(full->needed > 64);
    CHECK(full->turns_to_leave_out >= 1);
    CHECK(full->turns_to_leave_out <= sent);
    CHECK(int(app.reader.turns().size()) == sent);  // no message without a reply
    CHECK(app.input == "Hi " + std::to_string(sent));  // back in the box
    HeadlessFrames frames;
    frames.chat_panel(app);
    CHECK(app.context_notice_drawn);
    // Said in the chat, not twice beside Send.
    for (const std::string& n : app.notes_drawn) CHECK(n.find("context") == std::string::npos);

    REQUIRE(app.leave_out_oldest_and_send());
    app.worker.wait_idle();
    app.poll();
    INFO(app.worker.last_error());
    CHECK_FALSE(app.worker.context_full());
    REQUIRE(int(app.reader.turns().size()) == sent + 1);
    CHECK(app.reader.turns().back().done);
    CHECK(app.input.empty());
    int left_out = 0;
    for (const TurnRecord& t : app.reader.turns()) left_out += t.left_out;
    CHECK(left_out == full->turns_to_leave_out);
    CHECK_FALSE(app.reader.turns().back().left_out);
    frames.chat_panel(app);
    CHECK_FALSE(app.context_notice_drawn);

    // Full again, then a new chat with the message: the conversation starts over with it alone.
    while (send_and_wait(app, "Hello again")) {
    }
    INFO(app.worker.last_error());
    REQUIRE(app.worker.context_full());
    REQUIRE(app.new_chat_with_message());
    app.worker.wait_idle();
    app.poll();
    REQUIRE(app.reader.turns().size() == 1);
    CHECK(app.reader.turns()[0].prompt == "Hello again");
    CHECK(app.reader.turns()[0].done);
    std::filesystem::remove(gguf);
}
