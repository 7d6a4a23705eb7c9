#include "chat_app.h"

#include <imgui.h>

#include <cstdio>
#include <filesystem>

#include "chat_file.h"

namespace medusa::chat {

ChatApp::ChatApp(gpu::Context& c) : ctx(c), worker(c, log) {}

bool ChatApp::send(const std::string& prompt) {
    if (!worker.generate(prompt, settings)) return false;
    remember_model(recent_models, settings.model_path);
    last_prompt = prompt;
    last_settings = settings;
    selected_step = -1;
    scroll_chat = true;
    return true;
}

void ChatApp::regenerate() {
    if (last_prompt.empty() || worker.busy()) return;
    // The new reply replaces the last one: its turn leaves the log, and with it the history a
    // chat model is given.
    if (!log.drop_last_turn()) return;
    ++settings.seed;
    selected_step = -1;
    send(last_prompt);
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
        case FileKind::MedusaHeads: settings.heads_path = path, settings.mode = DrafterKind::Medusa; break;
        case FileKind::EagleLayer: settings.eagle_path = path, settings.mode = DrafterKind::Eagle; break;
        case FileKind::Tree: settings.tree = path, settings.mode = DrafterKind::Medusa; break;
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
    chat_path.clear(), saved_state.clear();  // the next finished turn starts a new file
}

std::string ChatApp::reply_of(int turn_id) const {
    std::string out;
    for (const TurnRecord& t : reader.turns())
        if (t.id == turn_id && t.restored) return t.saved_reply;
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
        turns.push_back(std::move(t));
    }
    log.restore(std::move(turns));
    reader.poll(log);
    chats_note.clear();
    chat_path = path;
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

std::string ChatApp::chat_state() const {
    std::string s;
    for (const TurnRecord& t : reader.turns())
        s += "\n" + std::to_string(t.id) + " " + std::to_string(t.done) + " " + std::to_string(t.new_tokens) + " " +
             std::to_string(t.prompt.size());
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
    SavedChat c;
    c.model_path = settings.model_path;
    for (const TurnRecord& t : turns)
        c.turns.push_back({t.prompt, reply_of(t.id), t.mode, t.chat, t.new_tokens, t.steps, t.decode_ms});
    try {
        save_chat(chat_path, c);
    } catch (const std::exception& e) {
        chats_note = std::string("the chat was not saved: ") + e.what();
        std::fprintf(stderr, "medusa-chat: %s\n", chats_note.c_str());
    }
}

void ChatApp::poll() {
    if (reader.poll(log)) scroll_chat = true;
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

// Content wider than the window is cut off at its right edge unless the window scrolls sideways.
void audit(std::vector<std::pair<std::string, float>>& out, const char* name) {
    out.push_back({name, ImGui::GetScrollMaxX()});
}

Rect rect_of_window() {  // NOLINT: used by the tree panel's bounds
    ImVec2 p = ImGui::GetWindowPos(), s = ImGui::GetWindowSize();
    return {p.x, p.y, s.x, s.y};
}

}  // namespace

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
    if (panel("Controls", 0, 0, controls_w, H)) draw_controls_panel(*this), audit(overflow, "controls");
    ImGui::End();
    // A chat model's turns are messages; a story model continues the text ("###chat": one window either way).
    const char* chat_title = worker.chat_model() ? "Chat###chat" : "Chat (story continuation)###chat";
    if (panel(chat_title, controls_w + gap, 0, chat_w, H)) draw_chat_panel(*this), audit(overflow, "chat");
    ImGui::End();
    if (panel("Candidate tree", right_x, 0, right_w, tree_h, ImGuiWindowFlags_NoScrollbar)) {
        tree_rect = rect_of_window();
        draw_tree_panel(*this);
        audit(overflow, "tree");
    }
    ImGui::End();
    if (panel("Timeline: tokens per step", right_x, bottom_y, timeline_w - gap, bottom_h))
        draw_timeline_panel(*this), audit(overflow, "timeline");
    ImGui::End();
    if (panel("Metrics", right_x + timeline_w, bottom_y, right_w - timeline_w, bottom_h))
        draw_metrics_panel(*this), audit(overflow, "metrics");
    ImGui::End();
    draw_charts_window(*this);
}

}  // namespace medusa::chat
