#include "chat_app.h"

#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "chat_file.h"

namespace medusa::chat {

ChatApp::ChatApp(gpu::Context& c) : ctx(c), worker(c, log) {}

namespace {

// Why the settings' mode cannot decode: a file it needs is not named ("" when none is missing).
std::string missing_file(const DecodeSettings& s) {
    if (s.model_path.empty()) return "Choose a model first: under Files in Controls, or drop one on the window.";
    if (s.mode == DrafterKind::Eagle && s.eagle.layer.empty())
        return "EAGLE needs its draft layer: choose one under layer in Controls (medusa train-eagle makes one), or "
               "pick another decoding mode.";
    if (s.mode == DrafterKind::DraftModel && s.draft.model.empty())
        return "The draft model mode needs a draft model: choose one under draft in Controls.";
    return "";
}

}  // namespace

bool ChatApp::send(const std::string& prompt) {
    send_note = missing_file(settings);
    if (!send_note.empty() || !worker.generate(prompt, settings)) return false;
    remember_model(recent_models, settings.model_path);
    last_prompt = prompt;
    last_settings = settings;
    turns_at_send = reader.turns().size();
    give_back_message = true;
    selected_step = -1;
    scroll_chat = true;
    return true;
}

bool ChatApp::can_regenerate() const {
    return !worker.busy() && !reader.turns().empty() && reader.turns().back().done && !last_prompt.empty();
}

void ChatApp::regenerate() {
    if (!can_regenerate()) return;
    // The new reply takes the last one's place, which is kept to flip back to: its turn leaves
    // the log, and with it the history a chat model is given.
    const TurnRecord& last = reader.turns().back();
    std::vector<std::string> replies = last.other_replies;
    if (last.shown_reply >= 0) replies.erase(replies.begin() + last.shown_reply);
    replies.push_back(reply_of(last.id));
    const std::string prompt = last.prompt;
    if (!log.drop_last_turn()) return;
    log.carry_replies(prompt, std::move(replies));
    reader.poll(log);
    ++settings.sampling.seed;
    selected_step = -1;
    send(prompt);
}

void ChatApp::show_reply(int which) {
    if (worker.busy() || reader.turns().empty()) return;
    log.show_reply(reader.turns().back().id, which);
    reader.poll(log);
    scroll_chat = true;
}

bool ChatApp::new_chat_with_message() {
    if (worker.busy() || !worker.context_full()) return false;
    const std::string message = last_prompt;
    clear();
    reader.poll(log);
    if (!send(message)) return false;
    input.clear();
    return true;
}

bool ChatApp::leave_out_oldest_and_send() {
    const auto full = worker.context_full();
    if (worker.busy() || !full) return false;
    // The first turn still given to the model once the oldest `turns_to_leave_out` are not.
    int kept = 0, first_kept = reader.turns().empty() ? 1 : reader.turns().back().id + 1;
    for (const TurnRecord& t : reader.turns())
        if (!t.left_out && kept++ == full->turns_to_leave_out) {
            first_kept = t.id;
            break;
        }
    log.leave_out_before(first_kept);
    reader.poll(log);
    if (!send(last_prompt)) return false;
    input.clear();
    return true;
}

std::vector<ChatApp::Note> ChatApp::send_notes() const {
    std::vector<Note> notes;
    if (!send_note.empty()) notes.push_back({send_note, true});
    // A conversation past the context is said in the chat itself, with what to do.
    if (const std::string e = worker.last_error(); !e.empty() && !worker.context_full()) notes.push_back({e, true});
    if (!chats_note.empty()) notes.push_back({chats_note, true});
    if (!drop_note.empty()) notes.push_back({drop_note, false});
    return notes;
}

bool ChatApp::edit_last() {
    if (last_prompt.empty() || worker.busy() || !log.drop_last_turn()) return false;
    input = last_prompt;
    selected_step = -1;
    return true;
}

bool ChatApp::measure_speedup() {
    const auto& turns = reader.turns();
    if (turns.empty() || !turns.back().done || turns.back().new_tokens < 2) return false;
    return worker.measure_speedup(turns.back().prompt, last_settings, turns.back().new_tokens, turns.back().id);
}

void ChatApp::drop(const std::string& path) {
    const FileKind k = classify_file(path);
    switch (k) {
        case FileKind::Model: settings.model_path = path; break;
        case FileKind::Tokenizer: settings.tokenizer_path = path; break;
        case FileKind::MedusaHeads: set_heads_field(settings, path), settings.mode = DrafterKind::Medusa; break;
        case FileKind::EagleLayer: settings.eagle.layer = path, settings.mode = DrafterKind::Eagle; break;
        case FileKind::Tree: set_tree_field(settings, path), settings.mode = DrafterKind::Medusa; break;
        case FileKind::Benchmark:
            bench_path = path;
            open_charts = true;
            drop_note = path + ": charted in the metrics panel's charts tab";
            return;
        case FileKind::Unknown:
            drop_note = path + ": not a model, tokenizer, Medusa heads, EAGLE layer, tree or benchmark";
            return;
    }
    drop_note = path + ": taken as the " + file_kind_name(k) + " (press Load)";
}

void ChatApp::next_phase() { phase = medusa::chat::next_phase(phase); }

void ChatApp::clear() {
    worker.stop();
    log.clear();
    selected_step = -1;
    send_note.clear();
    chat_path.clear(), saved_state.clear(), chat_name.clear();  // the next finished turn starts a new file
}

std::string ChatApp::reply_of(int turn_id) const {
    std::string out;
    for (const TurnRecord& t : reader.turns()) {
        if (t.id == turn_id && t.shown_reply >= 0) return t.other_replies[size_t(t.shown_reply)];
        if (t.id == turn_id && t.restored) return t.saved_reply;
    }
    for (const auto& st : reader.steps())
        if (st.turn == turn_id)
            for (const auto& piece : st.emitted_text) out += piece;
    return out;
}

bool ChatApp::open_chat(const std::string& path) {
    if (worker.busy()) return false;
    SavedChat c;
    try {
        c = load_chat(path);
    } catch (const std::exception& e) {
        chats_note = e.what();
        std::fprintf(stderr, "medusa-chat: %s\n", chats_note.c_str());
        return false;
    }
    std::vector<TurnRecord> turns;
    for (const SavedTurn& s : c.turns) {
        TurnRecord t;
        t.prompt = s.prompt, t.saved_reply = s.reply, t.mode = s.mode, t.chat = s.chat;
        t.new_tokens = s.new_tokens, t.steps = s.steps, t.decode_ms = s.decode_ms;
        t.other_replies = s.other_replies, t.left_out = s.left_out;
        turns.push_back(std::move(t));
    }
    log.restore(std::move(turns));
    reader.poll(log);
    chats_note.clear();
    chat_path = path;
    chat_name = c.name;
    saved_state = chat_state();
    selected_step = -1;
    last_prompt = c.turns.empty() ? "" : c.turns.back().prompt;
    std::error_code ec;
    if (!c.model_path.empty() && c.model_path != settings.model_path) {
        if (std::filesystem::exists(c.model_path, ec)) {
            settings.model_path = c.model_path;
            load();
        } else {
            chats_note = "the chat's model " + c.model_path + " is not there: it goes on with " + settings.model_path;
        }
    }
    scroll_chat = true;
    return true;
}

SavedChat ChatApp::saved_chat() const {
    SavedChat c;
    c.model_path = settings.model_path;
    c.name = chat_name;
    for (const TurnRecord& t : reader.turns()) {
        SavedTurn s{t.prompt, reply_of(t.id), t.mode, t.chat, t.new_tokens, t.steps, t.decode_ms, t.other_replies,
                    t.left_out};
        if (t.shown_reply >= 0) {  // the one shown is the reply; the turn's own joins the others
            s.other_replies.erase(s.other_replies.begin() + t.shown_reply);
            std::string own = t.saved_reply;
            for (const StepRecord& r : reader.steps())
                if (r.turn == t.id)
                    for (const std::string& piece : r.emitted_text) own += piece;
            s.other_replies.push_back(std::move(own));
        }
        c.turns.push_back(std::move(s));
    }
    return c;
}

std::string ChatApp::chat_state() const {
    std::string s;
    for (const TurnRecord& t : reader.turns())
        s += "\n" + std::to_string(t.id) + " " + std::to_string(t.done) + " " + std::to_string(t.new_tokens) + " " +
             std::to_string(t.prompt.size()) + " " + std::to_string(t.other_replies.size()) + " " +
             std::to_string(t.shown_reply) + " " + std::to_string(t.left_out);
    return s;
}

void ChatApp::save_chat_if_changed() {
    const auto& turns = reader.turns();
    if (!keep_chats || turns.empty() || !turns.back().done || worker.busy()) return;
    const std::string state = chat_state();
    if (state == saved_state) return;
    saved_state = state;
    if (chat_path.empty()) {
        const std::string dir = chats_dir();
        if (dir.empty()) return;
        chat_path = new_chat_path(dir);
    }
    SavedChat c = saved_chat();
    try {
        save_chat(chat_path, c);
    } catch (const std::exception& e) {
        chats_note = std::string("the chat was not saved: ") + e.what();
        std::fprintf(stderr, "medusa-chat: %s\n", chats_note.c_str());
    }
}

void ChatApp::poll() {
    if (reader.poll(log)) scroll_chat = true;
    // A message the worker refused (the context is full, a file failed to load) comes back into
    // the box, unless something was typed there since.
    if (give_back_message && !worker.busy()) {
        give_back_message = false;
        if (reader.turns().size() == turns_at_send && input.empty()) input = last_prompt;
    }
    if (const std::vector<DroppedFile> dropped = worker.take_dropped(); !dropped.empty()) {
        drop_files(settings, dropped);
        drop_note.clear();
        for (const DroppedFile& d : dropped) drop_note += (drop_note.empty() ? "Left out: " : "; ") + d.why;
        std::fprintf(stderr, "medusa-chat: %s\n", drop_note.c_str());
    }
    if (selected_step >= int(reader.steps().size())) selected_step = -1;
    save_chat_if_changed();
}

int ChatApp::shown_step() const {
    return selected_step >= 0 ? selected_step : int(reader.steps().size()) - 1;
}

namespace {

// A fixed, non-overlapping panel: the layout is the same in every screenshot.
bool panel(const char* title, float x, float y, float w, float h, ImGuiWindowFlags extra = 0) {
    ImGui::SetNextWindowPos(ImVec2(x, y));
    ImGui::SetNextWindowSize(ImVec2(w, h));
    return ImGui::Begin(title, nullptr,
                        ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                            ImGuiWindowFlags_NoSavedSettings | extra);
}

}  // namespace

Rect window_rect() {
    const ImVec2 p = ImGui::GetWindowPos(), s = ImGui::GetWindowSize();
    return {p.x, p.y, s.x, s.y};
}

// Content wider (taller) than a window is cut off at its edge unless the window scrolls that way.
void ChatApp::audit_window() {
    if (overflow.empty()) return;
    const ImGuiWindow* w = ImGui::GetCurrentWindow();
    float cut = 0;
    if (!(w->Flags & ImGuiWindowFlags_HorizontalScrollbar) || (w->Flags & ImGuiWindowFlags_NoScrollbar))
        cut = std::max(cut, ImGui::GetScrollMaxX());
    if (w->Flags & ImGuiWindowFlags_NoScrollbar) cut = std::max(cut, ImGui::GetScrollMaxY());
    overflow.back().second = std::max(overflow.back().second, cut);
}

void ChatApp::draw(float W, float H) {
    const float gap = 4;
    const float controls_w = 270;
    const float chat_w = std::max(300.0f, (W - controls_w) * 0.36f);
    const float right_x = controls_w + chat_w + 2 * gap;
    const float right_w = W - right_x;
    const float tree_h = H * 0.58f;
    const float bottom_y = tree_h + gap;
    const float bottom_h = H - bottom_y;
    const float timeline_w = right_w * 0.5f;

    overflow.clear();
    weighed_rect = {};
    // Each panel's account of what it cuts off starts empty; the panel and its children add to it.
    auto audited = [&](const char* name) { overflow.push_back({name, 0.0f}); };
    audited("controls");
    if (panel("Controls", 0, 0, controls_w, H)) draw_controls_panel(*this), audit_window();
    ImGui::End();
    // A chat model's turns are messages; a story model continues the text ("###chat": one window either way).
    const char* chat_title = worker.chat_model() ? "Chat###chat" : "Chat (story continuation)###chat";
    audited("chat");
    if (panel(chat_title, controls_w + gap, 0, chat_w, H)) draw_chat_panel(*this), audit_window();
    ImGui::End();
    audited("tree");
    tree_canvas_rect = mask_rect = {};
    if (panel("Candidate tree", right_x, 0, right_w, tree_h, ImGuiWindowFlags_NoScrollbar)) {
        tree_rect = window_rect();
        draw_tree_panel(*this);
        audit_window();
    }
    ImGui::End();
    audited("timeline");
    if (panel("Timeline: tokens per step", right_x, bottom_y, timeline_w - gap, bottom_h))
        draw_timeline_panel(*this), audit_window();
    ImGui::End();
    audited("metrics");
    if (panel("Metrics", right_x + timeline_w, bottom_y, right_w - timeline_w, bottom_h))
        draw_metrics_panel(*this), audit_window();
    ImGui::End();
    draw_charts_window(*this);
    chats.draw(*this);
}

}  // namespace medusa::chat
