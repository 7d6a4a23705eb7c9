// The chat panel keeps each turn laid out between frames (transcript.h): a frame after which
// nothing changed builds and places nothing, and draws only the lines in view however long the
// conversation; a new step rebuilds only its turn, a new width places every turn again. Headless
// ImGui frames over the app's real log.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "chat_app.h"
#include "headless_frame.h"
#include "worker_fixture.h"

using namespace medusa;
using namespace medusa::chat;
using medusa::chat::test::context;
using medusa::chat::test::HeadlessFrames;

namespace {

int runs_drawn(const ChatApp& app) {
    int n = 0;
    for (const auto& [style, runs] : app.markdown_drawn) n += runs;
    return n;
}

}  // namespace

TEST_CASE("the transcript is built when a turn changes and drawn only where it shows", "[chat][markdown]") {
    ChatApp app(context());
    app.keep_chats = false;
    // Reopened turns of 100 KB of words each, and a chat reply of 100 KB of nested lists (the
    // kind of reply that once ended the app).
    std::string words, nested;
    while (words.size() < 100000) words += "Lily saw a big red ball in the park. ";
    while (nested.size() < 100000) nested += "- ";
    std::vector<TurnRecord> turns(3);
    turns[0].prompt = "Once", turns[0].saved_reply = words;
    turns[1].chat = true, turns[1].prompt = "List it", turns[1].saved_reply = nested + "x";
    turns[2].prompt = "Again", turns[2].saved_reply = words;
    app.log.restore(turns);
    app.poll();
    HeadlessFrames ui;
    ui.chat_panel(app);
    CHECK(app.transcript.built() == 3);
    CHECK(app.transcript.placed() == 3);
    // Some 8,000 lines of 15 px font.
    CHECK(app.transcript.height() > 100000);
    ui.chat_panel(app);  // the panel's scroll bar appears: placed again, narrower
    CHECK(app.transcript.built() == 0);
    for (int frame = 0; frame < 3; ++frame) {
        ui.chat_panel(app);
        CHECK(app.transcript.built() == 0);
        CHECK(app.transcript.placed() == 0);
        // A 720 px window shows some 30 lines of a dozen words: every word of the conversation
        // (50,000) was drawn each frame.
        CHECK(runs_drawn(app) > 0);
        CHECK(runs_drawn(app) < 2000);
    }
    // A turn being decoded: only it is built, at each step and at its end.
    const int id = app.log.begin_turn("more", "plain", DrafterKind::Plain);
    StepRecord step;
    step.turn = id;
    step.emitted_text = {" and", " then"};
    app.log.append(step);
    app.poll();
    ui.chat_panel(app);
    CHECK(app.transcript.built() == 1);
    CHECK(app.transcript.placed() == 1);
    app.log.append(step);
    app.log.end_turn(id, StopReason::Length, 4, 2, 1.0);
    app.poll();
    ui.chat_panel(app);
    CHECK(app.transcript.built() == 1);
    CHECK(runs_drawn(app) > 0);
    // A narrower window: every turn placed again, none built.
    ui.chat_panel(app, 1000, 720);
    CHECK(app.transcript.built() == 0);
    CHECK(app.transcript.placed() == 4);
    // Clearing starts over.
    app.clear();
    app.poll();
    ui.chat_panel(app);
    CHECK(app.transcript.built() == 0);
    CHECK(runs_drawn(app) == 0);
}
