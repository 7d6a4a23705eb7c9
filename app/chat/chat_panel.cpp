// The conversation: each prompt, then its continuation token by token, coloured by origin
// (the model's own token vs a guess of head k the model accepted). Hover a token for its step.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <string>
#include <vector>

#include "chat_app.h"
#include "chat_file.h"
#include "dialog_keys.h"
#include "palette.h"
#include "step_explain.h"
#include "transcript.h"

namespace medusa::chat {

namespace {

constexpr float kInputLines = 2;  // the message box's height, in lines (it scrolls beyond)

// What the chat's colours stand for: Medusa's heads, the levels of EAGLE or the n-gram lookup, a
// draft model's tokens, auto's mixture.
struct LegendKinds {
    bool heads = false, levels = false, draft = false, mixed = false;
    void add(DrafterKind k) {
        heads = heads || k == DrafterKind::Medusa || k == DrafterKind::Auto;
        levels = levels || k == DrafterKind::Eagle || k == DrafterKind::Ngram;
        draft = draft || k == DrafterKind::DraftModel || k == DrafterKind::Auto;
        mixed = mixed || k == DrafterKind::Auto;
    }
    bool any() const { return heads || levels || draft; }
};

// Medusa turns colour accepted guesses by head, EAGLE and n-gram turns by level, draft turns by
// one "draft token" colour; the legend names what the chat holds (or, before anything is sent,
// what the settings will make).
void legend(const LegendKinds& k) {
    ImGui::TextDisabled("Colours:");
    std::vector<std::pair<int, std::string>> entries = {{0, "model's own token"}};
    for (int o = 1; o <= 4 && (k.heads || k.levels); ++o)
        entries.push_back({o, k.heads ? std::string(origin_name(o)) : "level " + std::to_string(o)});
    if (k.draft) entries.push_back({kDraftOrigin, origin_name(kDraftOrigin)});
    for (const auto& [o, label] : entries) {
        const char* name = label.c_str();
        const float need = ImGui::GetTextLineHeight() + 12 + ImGui::CalcTextSize(name).x;
        ImGui::SameLine();
        if (ImGui::GetContentRegionAvail().x < need) ImGui::NewLine();
        ImVec2 p = ImGui::GetCursorScreenPos();
        const float h = ImGui::GetTextLineHeight();
        ImGui::GetWindowDrawList()->AddRectFilled(p, ImVec2(p.x + h, p.y + h), origin_color(o), 2);
        ImGui::Dummy(ImVec2(h, h));
        ImGui::SameLine(0, 3);
        ImGui::TextUnformatted(name);
    }
    ImGui::PushTextWrapPos(0);
    if (k.heads) ImGui::TextDisabled("Head k = guessed k tokens ahead by Medusa head k, checked and accepted by the model.");
    if (k.levels)
        ImGui::TextDisabled("Level k = the step's k-th guess (EAGLE's level k, or the k-th token the n-gram lookup "
                            "copied), checked and accepted by the model.");
    if (k.draft)
        ImGui::TextDisabled("Draft token = proposed by the small draft model, checked and accepted by the target.");
    if (k.mixed)
        ImGui::TextDisabled("Auto: head k's colour marks the k-th accepted guess of whichever drafter the step used "
                            "(Medusa head k, EAGLE level k, the n-gram lookup); hover a token to see which.");
    ImGui::PopTextWrapPos();
}

// Given the keyboard, the message box puts its cursor after the text (ImGui would put it first).
int cursor_to_end(ImGuiInputTextCallbackData* d) {
    bool& pending = *static_cast<bool*>(d->UserData);
    if (pending) d->CursorPos = d->SelectionStart = d->SelectionEnd = d->BufTextLen, pending = false;
    return 0;
}

// The conversation as plain text: each prompt, then its reply.
std::string conversation_text(const ChatApp& app) {
    std::string out;
    for (const auto& turn : app.reader.turns()) {
        if (!out.empty()) out += "\n\n";
        out += turn.prompt + app.reply_of(turn.id);
    }
    return out;
}

// Tokens in the conversation's context after its last step (the prompt, what was emitted).
int context_used(const ChatApp& app) {
    const auto& steps = app.reader.steps();
    if (steps.empty()) return 0;
    const StepTrace& last = steps.back().trace;
    return last.base + 1 + int(last.emitted.size());
}

// Right-click on a message or reply: copy either, or take the last message back to edit.
void message_menu(ChatApp& app, int& turn_index) {
    if (!ImGui::BeginPopup("message")) return;
    const auto& turns = app.reader.turns();
    if (turn_index >= 0 && turn_index < int(turns.size())) {
        const auto& turn = turns[size_t(turn_index)];
        if (ImGui::MenuItem("Copy the message")) ImGui::SetClipboardText(turn.prompt.c_str());
        if (ImGui::MenuItem("Copy the reply")) ImGui::SetClipboardText(app.reply_of(turn.id).c_str());
        const bool last = turn_index + 1 == int(turns.size());
        if (ImGui::MenuItem("Edit and send again", nullptr, false, last && !app.worker.busy())) app.edit_last();
    }
    ImGui::EndPopup();
}

}  // namespace

// The width of the row of buttons under the message box, with the saved chats' button.
float button_row_width() {
    const ImGuiStyle& style = ImGui::GetStyle();
    float w = 0;
    for (const char* label : {"Send", "Regenerate", "Edit", "Stop", "Copy", "Clear", "Chats"})
        w += ImGui::CalcTextSize(label).x + 2 * style.FramePadding.x + style.ItemSpacing.x;
    return w + 16;  // the mark of a failed save beside it
}

// Saved chats (chat_file.h), most recent first: choosing one reopens it to read and go on with.
void chats_menu(ChatApp& app, bool busy) {
    static std::vector<ChatEntry> entries;
    static int skipped = 0;
    ImGui::BeginDisabled(busy);
    if (ImGui::Button("Chats")) {
        entries = list_chats(chats_dir(), &skipped);
        ImGui::OpenPopup("saved chats");
    }
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("Conversations are saved after every reply (in %s); reopen one to read it and go on.",
                          chats_dir().c_str());
    if (ImGui::BeginPopup("saved chats")) {
        if (entries.empty()) ImGui::TextDisabled("No saved chats yet.");
        for (size_t i = 0; i < entries.size(); ++i) {
            const ChatEntry& e = entries[i];
            const std::string label = e.title + "  (" + std::to_string(e.turns) + (e.turns == 1 ? " turn" : " turns") +
                                      ")##" + std::to_string(i);
            if (ImGui::Selectable(label.c_str(), e.path == app.chat_path)) app.open_chat(e.path);
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", e.path.c_str());
        }
        if (skipped > 0) ImGui::TextDisabled("%d files in the folder are not saved chats.", skipped);
        if (close_on_escape()) ImGui::CloseCurrentPopup();
        ImGui::EndPopup();
    }
    if (!app.chats_note.empty()) {
        ImGui::SameLine();
        ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.45f, 1.0f), "!");
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", app.chats_note.c_str());
    }
}

void draw_chat_panel(ChatApp& app) {
    LegendKinds kinds;
    for (const auto& t : app.reader.turns()) kinds.add(t.drafter);
    if (!kinds.any()) kinds.add(app.settings.mode);
    legend(kinds);
    ImGui::Separator();
    // Below the history: the message box, the buttons, and a status line.
    // (the buttons take two rows where the panel is too narrow for them in one)
    const bool two_rows = button_row_width() > ImGui::GetContentRegionAvail().x;
    const float input_h = kInputLines * ImGui::GetTextLineHeight() + 8 + ImGui::GetStyle().ItemSpacing.y +
                          ImGui::GetFrameHeightWithSpacing() * (two_rows ? 2 : 1) + ImGui::GetTextLineHeightWithSpacing() + 8;
    ImGui::BeginChild("history", ImVec2(0, -input_h), true);
    {
        const ImVec2 p = ImGui::GetWindowPos(), s = ImGui::GetWindowSize();
        app.chat_rect = {p.x, p.y, s.x, s.y};
    }
    app.transcript.update(app.reader, ImGui::GetContentRegionAvail().x);
    app.markdown_drawn.clear();
    const Span* hovered = app.transcript.draw(ImGui::GetCursorScreenPos(), app.shown_step(), app.markdown_drawn);
    if (!ImGui::IsWindowHovered()) hovered = nullptr;  // a dialog above (or the click that closed it) is not on the text
    ImGui::Dummy(ImVec2(1, app.transcript.height()));
    if (hovered && hovered->step >= 0) {
        const auto& steps = app.reader.steps();
        const Span& sp = *hovered;
        ImGui::SetTooltip("step %d: %s\n%s\n(click to show this step's tree)", steps[sp.step].trace.step,
                          sp.origin == 0               ? "the model's own token (one per step)"
                          : sp.origin == kDraftOrigin ? "proposed by the draft model, accepted by the target"
                                                       : ("guessed by " + guesser(steps[sp.step].trace, sp.origin) + ", accepted").c_str(),
                          step_caption(steps[sp.step]).c_str());
        if (ImGui::IsMouseClicked(0)) app.selected_step = sp.step;
    }
    static int menu_turn = -1;  // the turn the message menu was opened on
    if (hovered && hovered->turn >= 0 && ImGui::IsMouseClicked(1)) {
        menu_turn = hovered->turn;
        ImGui::OpenPopup("message");
    }
    message_menu(app, menu_turn);
    if (app.scroll_chat) {
        ImGui::SetScrollHereY(1.0f);
        app.scroll_chat = false;
    }
    ImGui::EndChild();

    const bool busy = app.worker.busy();
    // The box takes the keyboard when the window opens and when the worker goes idle (a reply
    // ended, a model loaded), unless another field has it.
    const bool focus = app.message_focus.worker_was_busy && !busy && !ImGui::IsAnyItemActive();
    app.message_focus.worker_was_busy = busy;
    if (focus) ImGui::SetKeyboardFocusHere(), app.message_focus.cursor_to_end = true;
    // Several lines: Enter sends, Shift+Enter or Ctrl+Enter starts a new line. ImGui has one key
    // for a new line, Ctrl+Enter with CtrlEnterForNewLine and Enter without, so the flag follows
    // the modifier held (the keys' state is never changed: ImGui checks it).
    const ImGuiIO& io = ImGui::GetIO();
    ImGuiInputTextFlags flags = ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_CallbackAlways;
    if (!io.KeyShift || io.KeyCtrl) flags |= ImGuiInputTextFlags_CtrlEnterForNewLine;
    const ImVec2 box = ImGui::GetCursorScreenPos();
    const bool enter = ImGui::InputTextMultiline("##prompt", &app.input, ImVec2(-1, kInputLines * ImGui::GetTextLineHeight() + 8),
                                                 flags, cursor_to_end, &app.message_focus.cursor_to_end);
    if (!focus) app.message_focus.cursor_to_end = false;  // taken the frame after the request, or not at all
    if (app.input.empty())  // InputTextMultiline has no hint of its own: drawn over the empty box
        ImGui::GetWindowDrawList()->AddText(
            ImVec2(box.x + ImGui::GetStyle().FramePadding.x, box.y + ImGui::GetStyle().FramePadding.y),
            IM_COL32(128, 128, 128, 255),
            app.worker.chat_model() ? "Message... (Shift+Enter: new line)" : "Start a story... (Shift+Enter: new line)");
    ImGui::BeginDisabled(busy);
    // A sent message leaves the box, so the next turn starts empty.
    if ((ImGui::Button("Send") || (enter && !busy)) && !app.input.empty() && app.send(app.input)) app.input.clear();
    ImGui::SameLine();
    if (ImGui::Button("Regenerate")) app.regenerate();
    ImGui::SameLine();
    ImGui::BeginDisabled(app.last_prompt.empty());
    if (ImGui::Button("Edit")) app.edit_last();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("The last message back in the box to change and send again; its reply goes. Right-click "
                          "any message to copy it or its reply.");
    ImGui::EndDisabled();
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::BeginDisabled(!busy);
    if (ImGui::Button("Stop")) app.stop();
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::BeginDisabled(app.reader.turns().empty());
    if (ImGui::Button("Copy")) ImGui::SetClipboardText(conversation_text(app).c_str());
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("Copies the whole conversation (prompts and replies) as plain text.");
    ImGui::SameLine();
    if (ImGui::Button("Clear")) ImGui::OpenPopup("Clear the conversation?");
    ImGui::EndDisabled();
    if (!two_rows) ImGui::SameLine();  // beside the other buttons where the panel is wide enough
    chats_menu(app, busy);
    if (ImGui::BeginPopupModal("Clear the conversation?", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
        ImGui::TextUnformatted("Every turn, its steps and trees go; a chat model starts a new conversation.");
        if (ImGui::Button("Clear")) app.clear(), ImGui::CloseCurrentPopup();
        ImGui::SameLine();
        if (ImGui::Button("Keep") || close_on_escape()) ImGui::CloseCurrentPopup();
        ImGui::EndPopup();
    }
    ImGui::TextDisabled(busy ? "generating..." : "idle");
    if (const int size = app.worker.context_size(); size > 0) {
        ImGui::SameLine();
        const int used = context_used(app);
        // Amber once most of the cache is used: the conversation is near its end.
        const ImVec4 color = used * 10 >= size * 9 ? ImVec4(1.0f, 0.7f, 0.3f, 1.0f) : ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled);
        ImGui::TextColored(color, "context %d / %d", used, size);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("Tokens the conversation holds after its last step, of the positions the model's KV cache "
                              "has (-c/--ctx-size).");
    }
}

}  // namespace medusa::chat
