// Saved chats: a conversation is written after each finished reply, reads back as it was, a
// damaged file is refused naming it, the list is most recent first, and a reopened chat goes on
// with its history given to the model.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "chat_app.h"
#include "chat_export.h"
#include "chat_file.h"
#include "headless_frame.h"
#include "model/model_file.h"
#include "temp_dir.h"
#include "tiny_gguf.h"
#include "worker_fixture.h"

using namespace medusa;
using namespace medusa::chat;
using medusa::chat::test::context;
using medusa::chat::test::HeadlessFrames;

namespace {

void write(const std::filesystem::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// MEDUSA_CHATS for one test (then back to the tests' own folder, main.cpp's).
struct ChatsDir {
    std::string old;
    explicit ChatsDir(const std::string& dir) {
        if (const char* c = std::getenv("MEDUSA_CHATS")) old = c;
        setenv("MEDUSA_CHATS", dir.c_str(), 1);
    }
    ~ChatsDir() {
        if (old.empty()) unsetenv("MEDUSA_CHATS");
        else setenv("MEDUSA_CHATS", old.c_str(), 1);
    }
};

}  // namespace

TEST_CASE("a saved chat reads back as it was written", "[chat][chats]") {
    medusa::test::TempDir dir("medusa-chats-roundtrip");
    SavedChat c;
    c.model_path = "/models/llama.gguf";
    c.turns.push_back({"Hello\nthere, how are you doing on this fine and sunny day today?", "Fine, thanks.\n**Bold**",
                       "plain decoding, greedy", true, 5, 5, 12.5});
    c.turns.push_back({"And then?", "", "medusa (mc_sim_7b_63)", true, 0, 0, 0});
    const std::string path = new_chat_path(dir.path.string());
    save_chat(path, c);
    const SavedChat back = load_chat(path);
    CHECK(back.model_path == c.model_path);
    REQUIRE(back.turns.size() == 2);
    CHECK(back.turns[0].prompt == c.turns[0].prompt);
    CHECK(back.turns[0].reply == c.turns[0].reply);
    CHECK(back.turns[0].mode == c.turns[0].mode);
    CHECK(back.turns[0].chat);
    CHECK(back.turns[0].new_tokens == 5);
    CHECK(back.turns[0].decode_ms == Approx(12.5));
    CHECK(back.title() == "Hello there, how are you doing on this fine and ...");  // 48 bytes, on one line
    CHECK(new_chat_path(dir.path.string()) != path);  // never an existing file
}

TEST_CASE("a damaged saved chat is refused with one line naming the file", "[chat][chats]") {
    medusa::test::TempDir dir("medusa-chats-bad");
    const auto path = dir.path / "chat.json";
    const std::pair<const char*, const char*> cases[] = {
        {"{\"medusa_chat\": 1, \"model\": \"m\", \"turns\": [", "malformed JSON"},
        {"[1, 2]", "not a saved chat"},
        {"{\"medusa_chat\": 2, \"model\": \"m\", \"turns\": []}", "format 2"},
        {"{\"medusa_chat\": 1, \"turns\": []}", "needs \"model\""},
        {"{\"medusa_chat\": 1, \"model\": \"m\", \"turns\": {}}", "\"turns\" as a list"},
        {"{\"medusa_chat\": 1, \"model\": \"m\", \"turns\": [7]}", "turn 1 is not an object"},
        {"{\"medusa_chat\": 1, \"model\": \"m\", \"turns\": [{\"prompt\": \"a\", \"reply\": 3}]}", "turn 1 needs \"reply\""},
        {"{\"medusa_chat\": 1, \"model\": \"m\", \"turns\": [{\"prompt\": \"a\", \"reply\": \"b\", \"mode\": \"m\", "
         "\"chat\": true, \"new_tokens\": -1, \"steps\": 1, \"decode_ms\": 1}]}",
         "\"new_tokens\" as a number"},
    };
    for (const auto& [text, why] : cases) {
        CAPTURE(text);
        write(path, text);
        try {
            load_chat(path.string());
            FAIL("no error");
        } catch (const FormatError& e) {
            CHECK_THAT(e.what(), Catch::Contains(path.string()) && Catch::Contains(why));
        }
    }
    CHECK_THROWS_WITH(load_chat(dir.path.string()), Catch::Contains("not a file"));
}

TEST_CASE("saved chats are listed most recent first, other files left out", "[chat][chats]") {
    medusa::test::TempDir dir("medusa-chats-list");
    SavedChat a, b;
    a.turns.push_back({"first chat", "r", "m", false, 1, 1, 1});
    b.turns.push_back({"second chat", "r", "m", false, 1, 1, 1});
    b.turns.push_back({"more", "r", "m", false, 1, 1, 1});
    save_chat((dir.path / "a.json").string(), a);
    save_chat((dir.path / "b.json").string(), b);
    std::filesystem::last_write_time(dir.path / "a.json",
                                     std::filesystem::last_write_time(dir.path / "b.json") + std::chrono::seconds(5));
    write(dir.path / "broken.json", "{");
    write(dir.path / "notes.txt", "not json");
    int skipped = 0;
    const std::vector<ChatEntry> list = list_chats(dir.path.string(), &skipped);
    REQUIRE(list.size() == 2);
    CHECK(list[0].title == "first chat");  // written last
    CHECK(list[1].title == "second chat");
    CHECK(list[1].turns == 2);
    CHECK(skipped == 1);  // broken.json (a .txt is no candidate)
    CHECK(list_chats((dir.path / "none").string()).empty());
}

TEST_CASE("a conversation is saved after its reply and goes on with its history when reopened", "[chat][chats]") {
    medusa::test::TempDir dir("medusa-chats-app");
    ChatsDir chats(dir.path.string());
    const std::string chatml = medusa::test::kChatmlTemplate;
    const std::filesystem::path gguf = medusa::test::write_tiny_gguf("app-chats", &chatml);
    auto settings = [&](ChatApp& app) {
        app.settings.model_path = gguf.string();
        app.settings.tokenizer_path.clear();
        app.settings.mode = DrafterKind::Plain;
        app.settings.max_new_tokens = 5;
        app.settings.ctx_size = 256;
    };
    auto first_base = [](const ChatApp& app, int turn_id) {
        for (const StepRecord& r : app.reader.steps())
            if (r.turn == turn_id) return r.trace.base;
        return -1;
    };
    std::string path, reply;
    {
        ChatApp app(context());
        settings(app);
        REQUIRE(app.send("Hello there"));
        app.worker.wait_idle();
        app.poll();
        REQUIRE(app.reader.turns().size() == 1);
        REQUIRE(!app.chat_path.empty());
        path = app.chat_path;
        REQUIRE(std::filesystem::exists(path));
        reply = app.reply_of(app.reader.turns()[0].id);
        const SavedChat saved = load_chat(path);
        REQUIRE(saved.turns.size() == 1);
        CHECK(saved.turns[0].prompt == "Hello there");
        CHECK(saved.turns[0].reply == reply);
        CHECK(saved.model_path == gguf.string());
    }
    int fresh_base = -1;
    {
        ChatApp fresh(context());  // the same message in a new conversation
        settings(fresh);
        fresh.keep_chats = false;
        REQUIRE(fresh.send("Go on"));
        fresh.worker.wait_idle();
        fresh.poll();
        fresh_base = first_base(fresh, fresh.reader.turns()[0].id);
    }
    ChatApp app(context());
    settings(app);
    REQUIRE(app.open_chat(path));
    REQUIRE(app.reader.turns().size() == 1);
    CHECK(app.reader.turns()[0].restored);
    CHECK(app.reply_of(app.reader.turns()[0].id) == reply);
    REQUIRE(app.send("Go on"));
    app.worker.wait_idle();
    app.poll();
    REQUIRE(app.reader.turns().size() == 2);
    // The reopened turn is in the prompt: the new message starts further into the context.
    CHECK(first_base(app, app.reader.turns()[1].id) > fresh_base);
    CHECK(app.chat_path == path);  // the same file, now with both turns
    CHECK(load_chat(path).turns.size() == 2);
    CHECK_FALSE(app.open_chat((dir.path / "missing.json").string()));
    CHECK_THAT(app.chats_note, Catch::Contains("missing.json"));
    std::filesystem::remove(gguf);
}

TEST_CASE("the Chats list shows each chat's date and model, and searches, renames, deletes and exports",
          "[chat][chats]") {
    medusa::test::TempDir dir("medusa-chats-manage");
    ChatsDir chats(dir.path.string());
    SavedChat dog, cat;
    dog.model_path = "/models/tinyllama-chat.gguf";
    dog.turns.push_back({"Tell me about my dog", "Dogs **like** walks.", "plain decoding", true, 4, 4, 1});
    cat.model_path = "/models/stories260K.bin";
    cat.turns.push_back({"Once upon a time", " there was a cat.", "plain decoding", false, 4, 4, 1});
    const std::string dog_path = (dir.path / "chat-dog.json").string(), cat_path = (dir.path / "chat-cat.json").string();
    save_chat(dog_path, dog);
    save_chat(cat_path, cat);
    std::filesystem::last_write_time(dog_path, std::filesystem::last_write_time(cat_path) + std::chrono::seconds(5));
    std::vector<ChatEntry> list = list_chats(dir.path.string());
    REQUIRE(list.size() == 2);
    CHECK(list[0].model == "tinyllama-chat.gguf");
    CHECK(list[1].model == "stories260K.bin");
    CHECK(saved_date(list[0].saved).size() == 16);  // "2026-11-27 14:03"
    CHECK(list[0].saved >= list[1].saved);
    // Search: titles, models and text, either case.
    CHECK(chat_matches(list[0], "WALKS"));
    CHECK(chat_matches(list[1], "stories260k"));
    CHECK_FALSE(chat_matches(list[1], "dog"));
    CHECK(chat_matches(list[1], ""));

    // Rename: the list's title, kept where it was in the order; the name survives the next save.
    rename_chat(dog_path, "Walks");
    list = list_chats(dir.path.string());
    CHECK(list[0].title == "Walks");
    CHECK(load_chat(dog_path).name == "Walks");

    // Export beside the chats, in a folder the list does not read.
    const std::string md = export_chat(dog_path, ".md"), json = export_chat(dog_path, ".json");
    CHECK(md == (dir.path / "exported" / "chat-dog.md").string());
    std::ifstream md_in(md);
    const std::string md_text((std::istreambuf_iterator<char>(md_in)), std::istreambuf_iterator<char>());
    CHECK_THAT(md_text, Catch::StartsWith("# Walks\n") && Catch::Contains("**You:**\n\nTell me about my dog"));
    CHECK(std::filesystem::exists(json));
    CHECK(list_chats(dir.path.string()).size() == 2);

    // The window lists what the search matches; deleting takes the file away.
    ChatApp app(context());
    app.keep_chats = false;
    HeadlessFrames frames;
    app.chats.open();
    app.chats.query = "cat";
    frames.whole_app(app);
    CHECK(app.chats.listed() == std::vector<std::string>{cat_path});
    delete_chat(cat_path);
    CHECK_FALSE(std::filesystem::exists(cat_path));
    CHECK_THROWS_WITH(delete_chat(md), Catch::Contains(md));  // only saved chats are removed
    CHECK(std::filesystem::exists(md));
}
