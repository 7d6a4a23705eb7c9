// Regenerate is there only when there is a reply to regenerate, and keeps the replies it replaces
// to flip between, as chat web UIs do: the one shown is what the model is given as history and
// what is saved and copied; Copy gives "You:" and "Assistant:" before each message and reply.
#include <catch2/catch.hpp>

#include "chat_app.h"
#include "chat_export.h"
#include "worker_fixture.h"

using namespace medusa;
using namespace medusa::chat;
using medusa::chat::test::context;

namespace {

void wait(ChatApp& app) {
    app.worker.wait_idle();
    app.poll();
}

}  // namespace

TEST_CASE("Regenerate needs a finished reply and keeps the earlier ones to flip between", "[chat][replies]") {
    ChatApp app(context());
    app.keep_chats = false;
    app.settings.mode = DrafterKind::Plain;
    app.settings.rule = AcceptRule::Sample;
    app.settings.sampling.temperature = 1.0f;
    app.settings.max_new_tokens = 10;
    CHECK_FALSE(app.can_regenerate());  // nothing sent yet
    app.last_prompt = "left over from a refused send";
    CHECK_FALSE(app.can_regenerate());  // still no reply
    REQUIRE(app.send("Once upon a time"));
    CHECK_FALSE(app.can_regenerate());  // decoding
    wait(app);
    REQUIRE(app.can_regenerate());
    const std::string first = app.reply_of(app.reader.turns()[0].id);
    app.regenerate();
    wait(app);
    REQUIRE(app.reader.turns().size() == 1);
    const TurnRecord& turn = app.reader.turns()[0];
    REQUIRE(turn.other_replies == std::vector<std::string>{first});
    const std::string second = app.reply_of(turn.id);
    CHECK(second != first);  // another draw
    app.regenerate();
    wait(app);
    REQUIRE(app.reader.turns()[0].other_replies == std::vector<std::string>{first, second});

    // Flip back to the first: shown, saved and copied as the reply; the others kept.
    app.show_reply(0);
    CHECK(app.reply_of(app.reader.turns()[0].id) == first);
    const SavedChat saved = app.saved_chat();
    CHECK(saved.turns[0].reply == first);
    CHECK(saved.turns[0].other_replies.size() == 2);
    CHECK(conversation_text(saved) == "Once upon a time" + first);  // a story: its text and continuation
    // The next message is decoded after the reply shown: the model's history is the first.
    app.settings.rule = AcceptRule::Greedy;
    REQUIRE(app.send(" Then"));
    wait(app);
    REQUIRE(app.reader.turns().size() == 2);
    CHECK(app.reader.turns()[1].done);
}

TEST_CASE("Copy and export give the speakers and the line breaks", "[chat][replies]") {
    SavedChat c;
    c.model_path = "/models/chat.gguf";
    c.turns.push_back({"Hi!\nHow are you?", "Fine.\n\nAnd you?", "plain decoding", true, 4, 4, 1.0});
    c.turns.push_back({"Good.", "Nice.", "plain decoding", true, 2, 2, 1.0});
    CHECK(conversation_text(c) ==
          "You: Hi!\nHow are you?\n\nAssistant: Fine.\n\nAnd you?\n\nYou: Good.\n\nAssistant: Nice.");
    const std::string md = conversation_markdown(c);
    CHECK_THAT(md, Catch::StartsWith("# Hi! How are you?\n\nModel: `chat.gguf`\n"));
    CHECK_THAT(md, Catch::Contains("**You:**\n\nHi!\nHow are you?\n\n**Assistant:**\n\nFine.\n\nAnd you?\n"));
    const std::string json = conversation_json(c);
    CHECK_THAT(json, Catch::Contains(R"("role": "user")") && Catch::Contains(R"("content": "Fine.\n\nAnd you?")"));
}
