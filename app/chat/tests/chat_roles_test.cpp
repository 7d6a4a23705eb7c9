// A chat-template model in the app: the worker knows it is one, each turn is recorded as a message
// and its reply (the chat panel puts "You:" and "Assistant:" before them, and titles itself "Chat"),
// and the reply decoded through the template's history; a story model's turns stay continuations.
#include <catch2/catch.hpp>

#include <filesystem>

#include "decode_worker.h"
#include "tiny_gguf.h"
#include "worker_fixture.h"

using namespace medusa;
using namespace medusa::chat;
using medusa::chat::test::context;

TEST_CASE("a chat-template model's turns are messages with replies, a story model's continuations", "[chat]") {
    const std::string chatml = medusa::test::kChatmlTemplate;
    const std::filesystem::path gguf = medusa::test::write_tiny_gguf("app-chatml", &chatml);
    DecodeSettings s;
    s.model_path = gguf.string();
    s.tokenizer_path.clear();  // the vocabulary inside the GGUF
    s.mode = DrafterKind::Plain;
    s.max_new_tokens = 6;
    StepLog log;
    DecodeWorker worker(context(), log);
    REQUIRE(worker.generate("Hi there", s));
    worker.wait_idle();
    INFO(worker.last_error());
    REQUIRE(worker.last_error().empty());
    CHECK(worker.chat_model());
    StepLogReader reader;
    reader.poll(log);
    REQUIRE(reader.turns().size() == 1);
    CHECK(reader.turns()[0].chat);
    std::filesystem::remove(gguf);

    DecodeSettings story;  // stories260K: no template
    story.mode = DrafterKind::Plain;
    story.max_new_tokens = 4;
    REQUIRE(worker.generate("Once upon a time", story));
    worker.wait_idle();
    CHECK_FALSE(worker.chat_model());
    reader.poll(log);
    REQUIRE(reader.turns().size() == 2);
    CHECK_FALSE(reader.turns()[1].chat);
}
