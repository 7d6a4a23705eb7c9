// The conversation: each prompt, then its continuation token by token, coloured by origin
// (the model's own token vs a guess of head k the model accepted). Hover a token for its step.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <cfloat>
#include <map>
#include <string>
#include <vector>

#include "chat_app.h"
#include "chat_file.h"
#include "chat_fonts.h"
#include "dialog_keys.h"
#include "markdown_text.h"
#include "palette.h"
#include "step_explain.h"

namespace medusa::chat {

namespace {

constexpr float kInputLines = 2;  // the message box's height, in lines (it scrolls beyond)

struct Span {
    std::string text;
    ImU32 color;
    int step = -1;    // index into the reader's steps; -1 for prompt text
    int origin = -1;  // -1: prompt
    int turn = -1;    // index into the reader's turns (-1: between turns)
    uint8_t style = kMdPlain;  // a chat message's markdown (markdown_text.h)
    // A chat model's turn: the message or the reply it belongs to (each drawn on a bubble).
    enum class Bubble : uint8_t { None, Message, Reply } bubble = Bubble::None;
};

ImVec2 text_size(const Span& s, const std::string& text) {
    return font_for_style(s.style)->CalcTextSizeA(ImGui::GetFontSize(), FLT_MAX, 0.0f, text.c_str());
}

// Lays spans out left to right, wrapping between words (a word = tokens up to the next space).
class Flow {
public:
    Flow(ImVec2 origin, float width) : origin_(origin), width_(width), line_h_(ImGui::GetTextLineHeightWithSpacing()) {}

    // Returns the span index under the mouse, or -1.
    int draw(const std::vector<Span>& spans, int selected_step) {
        ImDrawList* dl = ImGui::GetWindowDrawList();
        dl->ChannelsSplit(2);  // the bubbles go under the text, once their extents are known
        dl->ChannelsSetCurrent(1);
        const ImVec2 mouse = ImGui::GetIO().MousePos;
        int hovered = -1;
        for (size_t i = 0; i < spans.size(); ++i) {
            const std::string& t = spans[i].text;
            const uint8_t style = spans[i].style;
            size_t start = 0;
            while (start <= t.size()) {
                size_t nl = t.find('\n', start);
                std::string part = t.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
                if (!part.empty()) {
                    if (part[0] == ' ' && x_ > 0 && x_ + word_width(spans, i, part) > width_) newline();
                    const ImVec2 sz = text_size(spans[i], part);
                    const ImVec2 p(origin_.x + x_, origin_.y + y_);
                    // A code block's lines get a band across the width, before any text on them.
                    if ((style & kMdCodeBlock) && y_ != code_band_y_) {
                        dl->AddRectFilled(ImVec2(origin_.x - 2, p.y), ImVec2(origin_.x + width_, p.y + line_h_),
                                          IM_COL32(30, 32, 42, 255));
                        code_band_y_ = y_;
                    }
                    if (style & kMdCode) dl->AddRectFilled(ImVec2(p.x - 1, p.y), ImVec2(p.x + sz.x + 1, p.y + sz.y), IM_COL32(55, 58, 72, 255), 3);
                    const int origin = spans[i].origin;
                    if (origin > 0) dl->AddRectFilled(p, ImVec2(p.x + sz.x, p.y + sz.y), origin_color(origin, 0.18f), 2);
                    if ((spans[i].step >= 0 && spans[i].step == selected_step) || (style & kMdLink))
                        dl->AddLine(ImVec2(p.x, p.y + sz.y), ImVec2(p.x + sz.x, p.y + sz.y),
                                    style & kMdLink ? spans[i].color : IM_COL32_WHITE, style & kMdLink ? 1.0f : 1.5f);
                    if (style & kMdStrike)
                        dl->AddLine(ImVec2(p.x, p.y + sz.y * 0.55f), ImVec2(p.x + sz.x, p.y + sz.y * 0.55f), spans[i].color);
                    dl->AddText(font_for_style(style), ImGui::GetFontSize(), p, spans[i].color, part.c_str());
                    ++drawn_[style];
                    if (spans[i].bubble != Span::Bubble::None) {
                        auto [it, fresh] = bubbles_.try_emplace({spans[i].turn, spans[i].bubble}, p.y, p.y + line_h_);
                        if (!fresh) it->second.second = std::max(it->second.second, p.y + line_h_);
                    }
                    if (mouse.x >= p.x && mouse.x < p.x + sz.x && mouse.y >= p.y && mouse.y < p.y + sz.y)
                        hovered = int(i);
                    x_ += sz.x;
                }
                if (nl == std::string::npos) break;
                newline();
                start = nl + 1;
            }
        }
        dl->ChannelsSetCurrent(0);
        for (const auto& [key, extent] : bubbles_)
            dl->AddRectFilled(ImVec2(origin_.x - 5, extent.first - 3), ImVec2(origin_.x + width_ + 1, extent.second),
                              key.second == Span::Bubble::Message ? IM_COL32(38, 44, 60, 255) : IM_COL32(34, 34, 40, 255),
                              6);
        dl->ChannelsMerge();
        return hovered;
    }
    float height() const { return y_ + line_h_; }
    // Runs drawn per style this frame (the screenshot's JSON reports them).
    const std::map<uint8_t, int>& drawn() const { return drawn_; }

private:
    // Width of the word starting with `part`: it and the following spans up to the next space.
    float word_width(const std::vector<Span>& spans, size_t i, const std::string& part) const {
        float w = text_size(spans[i], part).x;
        for (size_t j = i + 1; j < spans.size() && j < i + 8; ++j) {
            const std::string& t = spans[j].text;
            if (t.empty() || t[0] == ' ' || t[0] == '\n') break;
            w += text_size(spans[j], t).x;
        }
        return w;
    }
    void newline() { x_ = 0, y_ += line_h_; }
    ImVec2 origin_;
    float width_, line_h_;
    float x_ = 0, y_ = 0;
    float code_band_y_ = -1;
    std::map<uint8_t, int> drawn_;
    std::map<std::pair<int, Span::Bubble>, std::pair<float, float>> bubbles_;  // (turn, bubble) -> top, bottom
};

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

// Text of one colour as one span per word (a word keeps the space before it), so that it wraps
// like the tokens do: the flow breaks lines only between spans.
void push_words(std::vector<Span>& spans, const std::string& text, ImU32 color, uint8_t style = kMdPlain) {
    std::string word;
    auto push = [&] { spans.push_back({word, color, -1, -1, -1, style}), word.clear(); };
    for (char c : text) {
        if ((c == ' ' || c == '\n') && !word.empty() && word != " ") push();
        word += c;
        if (c == '\n') push();
    }
    if (!word.empty()) push();
}

// A chat message as markdown: its text shown with the markup's styles (the layout's bullets and
// breaks in the message's colour).
void push_markdown(std::vector<Span>& spans, const std::string& text, ImU32 color) {
    for (const StyledRun& r : styled_runs({text})) push_words(spans, r.text, color, r.style);
}

// A chat reply as markdown, each shown byte keeping its token's colour, step and origin.
void push_reply(std::vector<Span>& spans, const std::vector<StepRecord>& steps, size_t first, size_t last) {
    std::vector<std::string> texts;
    std::vector<std::pair<int, int>> from;  // each token's (step, origin)
    for (size_t si = first; si < last; ++si)
        for (size_t k = 0; k < steps[si].emitted_text.size(); ++k) {
            texts.push_back(steps[si].emitted_text[k]);
            from.push_back({int(si), token_origin(steps[si], int(k))});
        }
    for (const StyledRun& r : styled_runs(texts)) {
        if (r.token < 0) {
            push_words(spans, r.text, kPromptText, r.style);
            continue;
        }
        const auto [step, origin] = from[size_t(r.token)];
        spans.push_back({r.text, origin_color(origin), step, origin, -1, r.style});
    }
}

std::string count(int n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

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
    std::vector<Span> spans;
    const auto& steps = app.reader.steps();
    size_t si = 0;
    for (size_t ti = 0; ti < app.reader.turns().size(); ++ti) {
        const auto& turn = app.reader.turns()[ti];
        if (!spans.empty()) spans.push_back({"\n\n", kPromptText});
        const size_t first = spans.size();
        // A chat model's turn is a message and a reply, each under its speaker and shown as markdown.
        if (turn.chat) {
            spans.push_back({"You:\n", kRoleText});
            push_markdown(spans, turn.prompt, kPromptText);
            const size_t message_end = spans.size();
            spans.push_back({"\n\n", kPromptText}), spans.push_back({"Assistant:\n", kRoleText});
            const size_t reply_begin = spans.size() - 1;
            const size_t first_step = si;
            while (si < steps.size() && steps[si].turn == turn.id) ++si;
            if (turn.restored) push_markdown(spans, turn.saved_reply, origin_color(0));
            else push_reply(spans, steps, first_step, si);
            for (size_t i = first; i < spans.size(); ++i)
                spans[i].bubble = i < message_end ? Span::Bubble::Message : i >= reply_begin ? Span::Bubble::Reply : Span::Bubble::None;
        } else if (turn.restored) {
            push_words(spans, turn.prompt, kPromptText);
            push_words(spans, turn.saved_reply, origin_color(0));
        } else {
            push_words(spans, turn.prompt, kPromptText);
            for (; si < steps.size() && steps[si].turn == turn.id; ++si)
                for (size_t k = 0; k < steps[si].emitted_text.size(); ++k) {
                    const int origin = token_origin(steps[si], int(k));
                    spans.push_back({steps[si].emitted_text[k], origin_color(origin), int(si), origin});
                }
        }
        for (size_t i = first; i < spans.size(); ++i) spans[i].turn = int(ti);
        if (turn.done) {
            // One span per word, so the summary wraps like the text above it.
            char buf[256];
            std::snprintf(buf, sizeof buf, "[%s: %s in %s, stop: %s]", turn.mode.c_str(),
                          count(turn.new_tokens, "token", "tokens").c_str(),
                          count(turn.steps, "forward pass", "forward passes").c_str(), stop_reason_name(turn.stop_reason));
            spans.push_back({"\n", IM_COL32(120, 120, 130, 255)});
            push_words(spans, buf, IM_COL32(120, 120, 130, 255));
        }
    }
    Flow flow(ImGui::GetCursorScreenPos(), ImGui::GetContentRegionAvail().x);
    int hovered = flow.draw(spans, app.shown_step());
    app.markdown_drawn = flow.drawn();
    if (!ImGui::IsWindowHovered()) hovered = -1;  // a dialog above (or the click that closed it) is not on the text
    ImGui::Dummy(ImVec2(1, flow.height()));
    if (hovered >= 0 && spans[hovered].step >= 0) {
        const Span& sp = spans[hovered];
        ImGui::SetTooltip("step %d: %s\n%s\n(click to show this step's tree)", steps[sp.step].trace.step,
                          sp.origin == 0               ? "the model's own token (one per step)"
                          : sp.origin == kDraftOrigin ? "proposed by the draft model, accepted by the target"
                                                       : ("guessed by " + guesser(steps[sp.step].trace, sp.origin) + ", accepted").c_str(),
                          step_caption(steps[sp.step]).c_str());
        if (ImGui::IsMouseClicked(0)) app.selected_step = sp.step;
    }
    static int menu_turn = -1;  // the turn the message menu was opened on
    if (hovered >= 0 && spans[hovered].turn >= 0 && ImGui::IsMouseClicked(1)) {
        menu_turn = spans[hovered].turn;
        ImGui::OpenPopup("message");
    }
    message_menu(app, menu_turn);
    if (app.scroll_chat) {
        ImGui::SetScrollHereY(1.0f);
        app.scroll_chat = false;
    }
    ImGui::EndChild();

    const bool busy = app.worker.busy();
    // Several lines: Enter sends, Shift+Enter or Ctrl+Enter starts a new line (ImGui knows only
    // Ctrl+Enter for that, so Shift+Enter is passed on as it).
    ImGuiIO& io = ImGui::GetIO();
    const bool ctrl = io.KeyCtrl;
    if (io.KeyShift && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter))) io.KeyCtrl = true;
    const ImVec2 box = ImGui::GetCursorScreenPos();
    bool enter = ImGui::InputTextMultiline("##prompt", &app.input, ImVec2(-1, kInputLines * ImGui::GetTextLineHeight() + 8),
                                           ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_CtrlEnterForNewLine);
    io.KeyCtrl = ctrl;
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
