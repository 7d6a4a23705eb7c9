// The conversation: each prompt, then its continuation token by token, coloured by origin
// (the model's own token vs a guess of head k the model accepted). Hover a token for its step.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

#include "chat_app.h"
#include "chat_file.h"
#include "chat_export.h"
#include "dialog_keys.h"
#include "flow_layout.h"
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

// Where the conversation outgrew the model's context: said at its end, with what can be done.
void context_notice(ChatApp& app) {
    const auto full = app.worker.context_full();
    if (!full || app.worker.busy()) return;
    app.context_notice_drawn = true;
    ImGui::Separator();
    std::string why = full->message();
    why[0] = char(std::toupper(static_cast<unsigned char>(why[0])));
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(ImVec4(1.0f, 0.7f, 0.3f, 1.0f), "The message was not sent. %s.", why.c_str());
    ImGui::PopTextWrapPos();
    if (ImGui::Button("New chat with this message")) app.new_chat_with_message();
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("This conversation stays saved (Chats); a new one starts with the message.");
    const std::string leave = "Leave the oldest " + std::to_string(full->turns_to_leave_out) +
                              (full->turns_to_leave_out == 1 ? " turn" : " turns") + " out and send";
    flow(button_width(leave.c_str()));
    if (ImGui::Button(leave.c_str())) app.leave_out_oldest_and_send();
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("They stay in the chat, marked, but the model no longer reads them.");
}

// Earlier replies of the last message (Regenerate keeps them): flip between them.
void reply_flipper(ChatApp& app, bool busy) {
    if (app.reader.turns().empty()) return;
    const TurnRecord& last = app.reader.turns().back();
    const int count = int(last.other_replies.size()) + 1;
    if (count < 2 || !last.done) return;
    // Shown as 1..count: the earlier replies first, the turn's own last.
    const int shown = last.shown_reply < 0 ? count : last.shown_reply + 1;
    char label[32];
    std::snprintf(label, sizeof label, "%d/%d", shown, count);
    flow(2 * ImGui::GetFrameHeight() + ImGui::CalcTextSize(label).x + 2 * ImGui::GetStyle().ItemSpacing.x);
    ImGui::BeginDisabled(busy || shown <= 1);
    if (ImGui::ArrowButton("##earlier reply", ImGuiDir_Left)) app.show_reply(shown - 2);
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::TextUnformatted(label);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The replies to the last message: the one shown goes on as the history.");
    ImGui::SameLine();
    ImGui::BeginDisabled(busy || shown >= count);
    if (ImGui::ArrowButton("##later reply", ImGuiDir_Right)) app.show_reply(shown == count - 1 ? -1 : shown);
    ImGui::EndDisabled();
}

// Send and the other buttons, wrapping where the panel is narrow.
void message_buttons(ChatApp& app, bool enter) {
    const bool busy = app.worker.busy();
    ImGui::BeginDisabled(busy);
    // A sent message leaves the box, so the next turn starts empty.
    if ((ImGui::Button("Send") || (enter && !busy)) && !app.input.empty() && app.send(app.input)) app.input.clear();
    ImGui::EndDisabled();
    flow(button_width("Regenerate"));
    ImGui::BeginDisabled(!app.can_regenerate());
    if (ImGui::Button("Regenerate")) app.regenerate();
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("A new reply to the last message (the next seed); the one before is kept to flip back to.");
    reply_flipper(app, busy);
    flow(button_width("Edit"));
    ImGui::BeginDisabled(busy || app.reader.turns().empty());
    if (ImGui::Button("Edit")) app.edit_last();
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("The last message back in the box to change and send again; its reply goes. Right-click "
                          "any message to copy it or its reply.");
    flow(button_width("Stop"));
    ImGui::BeginDisabled(!busy);
    if (ImGui::Button("Stop")) app.stop();
    ImGui::EndDisabled();
    flow(button_width("Copy"));
    ImGui::BeginDisabled(app.reader.turns().empty());
    if (ImGui::Button("Copy")) ImGui::SetClipboardText(conversation_text(app.saved_chat()).c_str());
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("Copies the conversation as text: \"You:\" before each message and \"Assistant:\" before "
                          "each reply (a story: its text and continuation).");
    flow(button_width("Clear"));
    if (ImGui::Button("Clear")) ImGui::OpenPopup("Clear the conversation?");
    ImGui::EndDisabled();
    flow(button_width("Chats"));
    ImGui::BeginDisabled(busy);
    if (ImGui::Button("Chats")) app.chats.open();
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("Conversations are saved after every reply (in %s): reopen, search, rename, delete or "
                          "export them.",
                          chats_dir().c_str());
    if (ImGui::BeginPopupModal("Clear the conversation?", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
        ImGui::TextUnformatted("Every turn, its steps and trees go; a chat model starts a new conversation.");
        if (ImGui::Button("Clear")) app.clear(), ImGui::CloseCurrentPopup();
        ImGui::SameLine();
        if (ImGui::Button("Keep") || close_on_escape()) ImGui::CloseCurrentPopup();
        ImGui::EndPopup();
    }
}

// Next to Send: why it was refused, the worker's error, files left out, a failed save.
void send_notes(ChatApp& app) {
    app.notes_drawn.clear();
    ImGui::PushTextWrapPos(0);
    for (const ChatApp::Note& n : app.send_notes()) {
        if (n.error) ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.45f, 1.0f), "%s", n.text.c_str());
        else ImGui::TextDisabled("%s", n.text.c_str());
        app.notes_drawn.push_back(n.text);
    }
    ImGui::PopTextWrapPos();
}

// The hovered token's step and where it came from; a click shows that step's tree.
void token_tooltip(ChatApp& app, const Span& sp) {
    const auto& steps = app.reader.steps();
    ImGui::SetTooltip("step %d: %s\n%s\n(click to show this step's tree)", steps[sp.step].trace.step,
                      sp.origin == 0               ? "the model's own token (one per step)"
                      : sp.origin == kDraftOrigin ? "proposed by the draft model, accepted by the target"
                                                   : ("guessed by " + guesser(steps[sp.step].trace, sp.origin) + ", accepted").c_str(),
                      step_caption(steps[sp.step]).c_str());
    if (ImGui::IsMouseClicked(0)) app.selected_step = sp.step;
}

// The conversation so far, `input_h` above the window's bottom: its text, the hovered token's
// tooltip, the message menu and the notice of a full context.
void history(ChatApp& app, float input_h) {
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
    if (hovered && hovered->step >= 0) token_tooltip(app, *hovered);
    static int menu_turn = -1;  // the turn the message menu was opened on
    if (hovered && hovered->turn >= 0 && ImGui::IsMouseClicked(1)) {
        menu_turn = hovered->turn;
        ImGui::OpenPopup("message");
    }
    message_menu(app, menu_turn);
    app.context_notice_drawn = false;
    context_notice(app);
    if (app.scroll_chat) {
        ImGui::SetScrollHereY(1.0f);
        app.scroll_chat = false;
    }
    app.audit_window();
    ImGui::EndChild();
}

// The message box; returns whether Enter sent it.
bool message_box(ChatApp& app, bool busy) {
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
    return enter;
}

// Idle or generating, and how much of the context the conversation holds.
void status_line(ChatApp& app, bool busy) {
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

}  // namespace

void draw_chat_panel(ChatApp& app) {
    LegendKinds kinds;
    for (const auto& t : app.reader.turns()) kinds.add(t.drafter);
    if (!kinds.any()) kinds.add(app.settings.mode);
    legend(kinds);
    ImGui::Separator();
    // Below the history: the message box, the buttons, the notes next to them and a status line,
    // as tall as they were last frame (the buttons wrap, the notes vary).
    const float input_h = app.chat_bottom_h > 0 ? app.chat_bottom_h
                                                : kInputLines * ImGui::GetTextLineHeight() + 8 +
                                                      2 * ImGui::GetFrameHeightWithSpacing() +
                                                      ImGui::GetTextLineHeightWithSpacing() + 8;
    history(app, input_h);
    const float bottom_top = ImGui::GetCursorPosY();
    const bool busy = app.worker.busy();
    message_buttons(app, message_box(app, busy));
    send_notes(app);
    status_line(app, busy);
    app.chat_bottom_h = ImGui::GetCursorPosY() - bottom_top + ImGui::GetStyle().ItemSpacing.y;
}

}  // namespace medusa::chat
