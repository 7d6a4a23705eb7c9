#include "chat_app.h"

#include <imgui.h>

#include <cstdio>

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
