// A chat template chosen in the app for a model with none or the wrong one: a story model spoken
// to as ChatML becomes a chat, a ChatML model set to none continues text; the status line names
// the template chosen, and the choice is kept per model with the settings (unknown names dropped).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "decode_worker.h"
#include "settings_store.h"
#include "temp_dir.h"
#include "tiny_gguf.h"
#include "worker_fixture.h"

using namespace medusa;
using namespace medusa::chat;
using medusa::chat::test::context;
using medusa::chat::test::decode_turn;

TEST_CASE("a chat template chosen for a model decides whether its turns are messages", "[chat][template]") {
    DecodeSettings story;  // stories260K: a llama2.c checkpoint without a template
    story.mode = DrafterKind::Plain;
    story.max_new_tokens = 4;
    story.chat_templates[story.model_path] = "chatml";
    CHECK(decode_turn(story, "Hi").turns()[0].chat);
    {
        StepLog log;
        DecodeWorker worker(context(), log);
        worker.load(story);
        worker.wait_idle();
        CHECK(worker.chat_model());
        CHECK_THAT(worker.status(), Catch::Contains("chat template chatml (chosen)"));
        CHECK(worker.model_chat_template().kind == ChatTemplate::None);  // the model's own, whatever was chosen
    }

    const std::string chatml = medusa::test::kChatmlTemplate;
    const std::filesystem::path gguf = medusa::test::write_tiny_gguf("app-template-none", &chatml);
    DecodeSettings model = story;
    model.model_path = gguf.string();
    model.tokenizer_path.clear();
    model.chat_templates = {{model.model_path, "none"}};
    CHECK_FALSE(decode_turn(model, "Once upon a time").turns()[0].chat);
    model.chat_templates.clear();
    CHECK(decode_turn(model, "Hi").turns()[0].chat);  // its own again

    model.chat_templates = {{model.model_path, "klingon"}};
    StepLog log;
    DecodeWorker worker(context(), log);
    REQUIRE(worker.generate("Hi", model));
    worker.wait_idle();
    CHECK_THAT(worker.last_error(), Catch::Contains("chat template 'klingon'") && Catch::Contains("chatml"));
    std::filesystem::remove(gguf);
}

TEST_CASE("chosen chat templates are saved per model, names no template has left out", "[chat][template]") {
    medusa::test::TempDir dir("medusa-settings-templates");
    const std::string path = (dir.path / "settings.json").string();
    SavedState st;
    st.settings.chat_templates = {{"/m/a.gguf", "llama3"}, {"/m/b.bin", "none"}};
    save_state(path, st);
    CHECK(load_state(path)->settings.chat_templates == st.settings.chat_templates);
    std::ofstream(path) << R"({"chat_templates": {"/m/a.gguf": "klingon", "/m/b.bin": "zephyr", "/m/c": 7}})";
    CHECK(load_state(path)->settings.chat_templates == std::map<std::string, std::string>{{"/m/b.bin", "zephyr"}});
}
