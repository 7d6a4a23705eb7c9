// The chat panel shows a chat model's messages as markdown: a message with a heading (in a larger
// face), a list, bold and inline code, a code block and a table (a grid) is drawn in those styles (counted by the panel as it draws, in
// a headless ImGui frame over the app's real turn), and a story model's text stays as written.
#include <catch2/catch.hpp>
#include <imgui.h>

#include <filesystem>

#include "chat_app.h"
#include "headless_frame.h"
#include "markdown_text.h"
#include "tiny_gguf.h"
#include "worker_fixture.h"

using namespace medusa;
using namespace medusa::chat;
using medusa::chat::test::context;
using medusa::chat::test::HeadlessFrames;

namespace {

int runs_with(const ChatApp& app, uint8_t flag) {
    int n = 0;
    for (const auto& [style, runs] : app.markdown_drawn) n += (style & flag) ? runs : 0;
    return n;
}

}  // namespace

TEST_CASE("a chat model's messages are drawn as markdown, a story model's as written", "[chat][markdown]") {
    const std::string chatml = medusa::test::kChatmlTemplate;
    const std::filesystem::path gguf = medusa::test::write_tiny_gguf("app-markdown", &chatml);
    const std::string message =
        "# Plan\n\n- **first** with `x`\n- *then*\n\n```\nint y = 2;\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |";
    {
        ChatApp app(context());
        app.settings.model_path = gguf.string();
        app.settings.tokenizer_path.clear();
        app.settings.mode = DrafterKind::Plain;
        app.settings.max_new_tokens = 4;
        app.settings.ctx_size = 256;  // the message is longer than the tiny model's 64 positions
        REQUIRE(app.send(message));
        app.worker.wait_idle();
        app.poll();
        REQUIRE(app.reader.turns().size() == 1);
        REQUIRE(app.reader.turns()[0].chat);
        HeadlessFrames frames;
        frames.chat_panel(app);
        CHECK(runs_with(app, kMdHeading) >= 1);
        CHECK(runs_with(app, kMdStrong) >= 2);  // the heading is bold too
        CHECK(runs_with(app, kMdEmphasis) >= 1);
        CHECK(runs_with(app, kMdCode) >= 1);
        CHECK(runs_with(app, kMdCodeBlock) >= 1);
        // The heading in a larger face than the text; the table as a grid: a line over and under
        // each of its two rows, and beside each of its two columns.
        CHECK(app.transcript.drawn_blocks().heading_px >= 1.4f * ImGui::GetFontSize());
        CHECK(app.transcript.drawn_blocks().grid_lines == 3 + 3);
    }
    std::filesystem::remove(gguf);
    ChatApp story(context());  // stories260K: no template, the text as typed
    story.settings.mode = DrafterKind::Plain;
    story.settings.max_new_tokens = 4;
    REQUIRE(story.send("Tom had **two** cats"));
    story.worker.wait_idle();
    story.poll();
    HeadlessFrames().chat_panel(story);
    CHECK(runs_with(story, kMdStrong) == 0);
    CHECK(story.transcript.drawn_blocks().heading_px == 0);
    CHECK(story.markdown_drawn.count(kMdPlain));
}
