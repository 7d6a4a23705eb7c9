// The application state and the actions the buttons (and the scripted smoke test) call. Each
// panel is a function over this state, drawn every frame from the StepLogReader's copy.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat_file.h"
#include "chats_window.h"
#include "settings_store.h"
#include "tree_audit.h"
#include "decode_settings.h"
#include "decode_worker.h"
#include "file_dialog.h"
#include "file_kind.h"
#include "step_log.h"
#include "teaching_phase.h"
#include "transcript.h"

namespace medusa::chat {

struct Rect {
    float x = 0, y = 0, w = 0, h = 0;
};
Rect window_rect();  // the current ImGui window's, on the screen

struct ChatApp : ChatsHost {
    ChatApp(gpu::Context& ctx);

    // Actions.
    // Starts a turn; false while one runs, or when the mode lacks a file it needs (send_note says
    // which, next to Send). A message the worker refuses comes back into the box.
    bool send(const std::string& prompt);
    void stop() { worker.stop(); }
    // The last message again with the next seed; its reply so far is kept to flip back to.
    bool can_regenerate() const;
    void regenerate();
    // Which of the last turn's replies is shown (and given to the model as history): -1 its own,
    // else one Regenerate replaced.
    void show_reply(int which);
    // What the chat offers when the conversation outgrew the context (worker.context_full()): a
    // new chat starting with the refused message, or the oldest turns it named left out of the
    // model's context and the message sent again.
    bool new_chat_with_message();
    bool leave_out_oldest_and_send();
    // The last message back in the input box, to change and send again: its turn (and reply)
    // leaves the conversation. False while decoding or with nothing sent.
    bool edit_last();
    void clear();
    // A saved chat (chat_file.h) as the conversation, its model loaded where it is not the one in
    // use; false (and chats_note says why) when decoding or the file does not read.
    bool open_chat(const std::string& path);
    // The Chats window's view of the app (ChatsHost).
    const std::string& current_chat() const override { return chat_path; }
    void name_current_chat(const std::string& name) override { chat_name = name; }
    void forget_current_chat() override { chat_path.clear(), saved_state.clear(); }
    bool open_saved_chat(const std::string& path) override { return open_chat(path); }
    std::string why_not_opened() const override {
        return chats_note.empty() ? "a chat cannot be opened while decoding" : chats_note;
    }
    void load() { remember_model(recent_models, settings.model_path), worker.load(settings); }
    // A file or folder dropped on the window: its kind (by content) decides which setting it sets.
    void drop(const std::string& path);
    // Teaching mode: the next phase of the latest step (draft, tree, forward, acceptance, commit).
    void next_phase();
    // The last finished turn's prompt, decoded again with its settings and with plain decoding for
    // as many tokens, on the worker; the result shows in the metrics panel, not in the chat.
    bool measure_speedup();

    // Per frame: pull new steps, then draw every panel into a window of this size.
    void poll();
    void draw(float width, float height);

    // The step the tree panel shows: the selected one, else the latest.
    int shown_step() const;
    // A turn's reply as text (a reopened turn's as it was saved, or the earlier one shown).
    std::string reply_of(int turn_id) const;
    // The conversation as a saved chat (chat_file.h): what is saved, copied and exported.
    SavedChat saved_chat() const;
    // The lines next to Send: why the last Send was refused, the worker's error, files left out,
    // a failed save. Errors first.
    struct Note {
        std::string text;
        bool error = false;
    };
    std::vector<Note> send_notes() const;

    gpu::Context& ctx;
    StepLog log;
    StepLogReader reader;
    DecodeSettings settings;
    DecodeWorker worker;
    std::string input = "Once upon a time";
    std::string send_note;  // why the last Send was refused before decoding (a file the mode needs)
    size_t turns_at_send = 0;  // turns before the last Send: none added means it was refused
    bool give_back_message = false;  // the last message goes back into the box if refused
    std::vector<std::string> recent_models;  // most recent first (settings_store.h keeps them)
    std::string last_prompt;
    DecodeSettings last_settings;  // what the last turn was sent with
    int selected_step = -1;  // index into reader.steps(); -1 follows the latest
    float tree_zoom = 1.0f;
    bool tree_fit = true;
    bool tree_all = false;  // every node of the tree, not just the accepted path and the guesses under it
    bool tree_mask = false;  // the verify pass's attention mask beside the tree
    bool scroll_chat = false;
    TeachingPhase phase = TeachingPhase::WholeStep;  // teaching mode's walk through the latest step
    FileDialog files;
    ChatsWindow chats;  // the saved chats, to reopen, search, rename, delete and export
    float chat_bottom_h = 0;  // the chat panel's message box, buttons and notes, last frame
    std::string drop_note;  // what the last dropped file was taken for
    std::string bench_path;  // a `medusa bench --json` result to chart (dropped or chosen)
    bool open_charts = false;  // a request: bring the metrics panel's charts tab forward (next frame)
    bool charts_window = false;  // the charts also in a movable window of their own, two columns wide
    // Where the panels landed this frame (for the screenshot's sidecar and its test).
    Rect tree_rect, chat_rect;
    Rect weighed_rect;  // the tree panel's table of the shapes the step controller weighed (empty: none drawn)
    Rect tree_canvas_rect, mask_rect;  // the tree's scrolling view, and the attention mask beside it (empty: none)
    float tree_text_h = 1e9f;  // the height the step's text above the tree took last frame
    struct TreeScroll {
        int step = -1;   // the step the tree's view was last scrolled to
        int frames = 0;  // frames left to scroll it
    } tree_scrolled;
    // Per panel, how far its content (its child windows' included) reaches past an edge it cannot
    // scroll to (0 when nothing is cut off); the screenshot test fails on any, at every window size
    // it tries.
    std::vector<std::pair<std::string, float>> overflow;
    // Called before the End of a panel, or the EndChild of a window inside one: what that window
    // cuts off and cannot scroll to joins the panel's overflow.
    void audit_window();
    // The tree panel's boxes and labels of the last frame, checked (tree_audit.h); all zero
    // before a tree is drawn.
    TreeAuditCounts tree_audit;
    // The transcript's runs of text drawn last frame, per set of MarkdownStyle flags.
    std::map<uint8_t, int> markdown_drawn;
    std::vector<std::string> notes_drawn;  // the lines drawn next to Send last frame
    bool context_notice_drawn = false;     // the chat showed the context-full notice last frame
    Transcript transcript;  // the chat panel's text, kept laid out between frames
    // The message box takes the keyboard when the window opens and when the worker goes idle.
    struct MessageFocus {
        bool worker_was_busy = true;  // at the last frame (true at first: the window just opened)
        bool cursor_to_end = false;   // requested: put the cursor after the text once the box has it
    } message_focus;
    // The conversation's file (chat_file.h), saved after each finished turn: "" until the first.
    std::string chat_path;
    std::string chat_name;  // given to it in the Chats list ("": none)
    bool keep_chats = true;  // off for --screenshot runs, which are not conversations
    std::string chats_note;  // why the last save or open failed
    std::string saved_state;  // the turns as last saved (saving again only when they change)

private:
    std::string chat_state() const;  // what saving depends on: each turn's progress
    void save_chat_if_changed();
};

// Panels (one file each).
void draw_controls_panel(ChatApp& app);
void draw_chat_panel(ChatApp& app);
void draw_tree_panel(ChatApp& app);
void draw_timeline_panel(ChatApp& app);
void draw_metrics_panel(ChatApp& app);
void draw_charts_window(ChatApp& app);  // metrics_panel.cpp: the charts tab, larger

}  // namespace medusa::chat
