// One bar per step, as tall as the tokens it produced and stacked by origin (the model's own
// token at the bottom, then head 1, head 2 ... guesses (or draft tokens) it accepted), with a strip
// under a controlled step's bar in the colour of its drafter. Click a bar to inspect it.
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "break_even.h"
#include "chat_app.h"
#include "control_explain.h"
#include "drafter_use.h"
#include "decode/decoding_kinds.h"
#include "palette.h"
#include "step_explain.h"
#include "turn_speed.h"

namespace medusa::chat {

namespace {

// A controlled step names its drafter first and says why the controller chose it.
std::string step_tooltip(const StepRecord& r) {
    if (!r.controlled) return step_caption(r);
    std::string out = std::string("[") + drafter_word(r.trace.drafter) + "] " + step_caption(r);
    if (r.trace.control) out += "\n" + control_sentence(*r.trace.control);
    if (const std::string outcome = drafted_anyway_outcome(r.trace); !outcome.empty()) out += "\n" + outcome;
    if (const auto b = break_even(r.trace); b && r.trace.control->chosen > 0) {
        char buf[200];
        std::snprintf(buf, sizeof buf,
                      "\nBreak-even: %.2f tokens (what this shape costs, in plain steps); expected %.2f, got %d: %s.",
                      b->tokens, b->expected, b->got, b->paid() ? "it paid" : "it did not pay");
        out += buf;
    }
    return out;
}

// The panel's line: tokens from forward passes, the current turn's predicted and measured speedup,
// and the drafters' colours.
void draw_timeline_header(const ChatApp& app, const std::vector<StepRecord>& steps) {
    int tokens = 0;
    for (const auto& s : steps) tokens += int(s.trace.emitted.size());
    const int passes = int(steps.size());  // one verify pass per step
    ImGui::PushTextWrapPos(0);
    ImGui::Text("%d token%s from %d forward pass%s", tokens, tokens == 1 ? "" : "s", passes, passes == 1 ? "" : "es");
    ImGui::SameLine();
    ImGui::TextDisabled("(?)");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("x: steps (click one for its tree); y: tokens it gave. Plain decoding: one per pass.\n"
                          "White ticks: each shaped step's break-even, its cost in plain steps by the controller's "
                          "costs (a bar above its tick paid).");
    // The current turn: what the controller's shapes were predicted to gain, and what measuring gave.
    if (!app.reader.turns().empty()) {
        const TimelineSpeedup sp = timeline_speedup(app.reader.turns().back(), steps, app.worker.speedup());
        char predicted[64] = "";
        if (sp.shaped_steps > 0) std::snprintf(predicted, sizeof predicted, "Predicted %.2fx plain; ", sp.predicted);
        if (sp.measured)
            ImGui::TextDisabled("%smeasured %.2fx (measure speedup)", predicted, *sp.measured);
        else if (sp.shaped_steps > 0)
            ImGui::TextDisabled("%smeasured: see measure speedup", predicted);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("Predicted: by the step controller's costs for this device. Measured: measure speedup "
                              "under Metrics decodes this turn's prompt again, drafted and plainly, alike and with the "
                              "window not drawn meanwhile (on a CPU driver drawing takes from decoding).");
    }
    draw_drafter_legend(steps);
    ImGui::PopTextWrapPos();
}

// Where the bars go: the plot's corner and height, a token's height, a bar's width and the gap.
struct BarScale {
    ImVec2 o;
    float h, unit, bar_w, gap;
    int max_tokens;
    static constexpr float kStrip = 4;  // the drafter's colour under a controlled step's bar
};

// One step's bar at `x`: bottom the model's own token, above it the accepted guesses by head (or
// the accepted draft tokens); a controlled step's drafter strip, a shaped step's break-even tick,
// and a frame around the step shown.
void draw_step_bar(ImDrawList* dl, const BarScale& b, const StepRecord& step, float x, bool shown) {
    const StepTrace& t = step.trace;
    const float h = b.h, unit = b.unit;
    const int n = int(t.emitted.size());
    for (int k = 0; k < n; ++k) {
        const int origin = k == 0 ? 0 : step.source == StepSource::Draft ? kDraftOrigin : k;
        const float y1 = b.o.y + h - k * unit, y0 = y1 - unit + 1;
        dl->AddRectFilled(ImVec2(x, y0), ImVec2(x + b.bar_w, y1), origin_color(origin, 0.9f), 1);
    }
    if (step.controlled)
        dl->AddRectFilled(ImVec2(x, b.o.y + h + 1), ImVec2(x + b.bar_w, b.o.y + h + BarScale::kStrip),
                          drafter_color(t.drafter));
    // A drafted shape's break-even: the bar must reach above the tick to have paid.
    if (const auto even = break_even(t); even && t.control->chosen > 0) {
        const float y = b.o.y + h - float(std::min(even->tokens, double(b.max_tokens) + 0.5)) * unit;
        dl->AddLine(ImVec2(x - 1, y), ImVec2(x + b.bar_w + 1, y), IM_COL32(255, 255, 255, 230), 2);
    }
    if (shown)
        dl->AddRect(ImVec2(x - 2, b.o.y + h - std::max(1, n) * unit - 2),
                    ImVec2(x + b.bar_w + 2, b.o.y + h + BarScale::kStrip + 1), IM_COL32_WHITE, 2, 0, 2);
}

// The bars in a scrolling child window (64 px at least: a short panel scrolls to them), with guide
// lines at each token count; a bar's tooltip, and a click shows its step's tree.
void draw_step_bars(ChatApp& app, const std::vector<StepRecord>& steps) {
    ImGui::BeginChild("bars", ImVec2(0, std::max(64.0f, ImGui::GetContentRegionAvail().y)), true,
                      ImGuiWindowFlags_HorizontalScrollbar);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    BarScale b{.o = ImGui::GetCursorScreenPos()};
    b.h = std::max(40.0f, ImGui::GetContentRegionAvail().y - ImGui::GetStyle().ScrollbarSize - 4 - BarScale::kStrip);
    b.max_tokens = 2;
    for (const auto& s : steps) b.max_tokens = std::max(b.max_tokens, int(s.trace.emitted.size()));
    b.unit = std::max(4.0f, (b.h - 16) / b.max_tokens);
    const float fit = (ImGui::GetContentRegionAvail().x - 24) / std::max<size_t>(1, steps.size());
    b.gap = fit > 8 ? 3 : 1, b.bar_w = std::clamp(fit - b.gap, 3.0f, 12.0f);
    for (int k = 1; k <= b.max_tokens; ++k) {
        const float y = b.o.y + b.h - k * b.unit;
        dl->AddLine(ImVec2(b.o.x, y), ImVec2(b.o.x + std::max(400.0f, steps.size() * (b.bar_w + b.gap)), y),
                    IM_COL32(70, 70, 80, 90));
        char buf[16];
        std::snprintf(buf, sizeof buf, "%d", k);
        dl->AddText(ImVec2(b.o.x, y), IM_COL32(120, 120, 130, 255), buf);
    }
    const float x0 = b.o.x + 14;
    const int shown = app.shown_step();
    int hovered = -1;
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    for (size_t i = 0; i < steps.size(); ++i) {
        const float x = x0 + i * (b.bar_w + b.gap);
        draw_step_bar(dl, b, steps[i], x, int(i) == shown);
        if (mouse.x >= x && mouse.x < x + b.bar_w + b.gap && mouse.y >= b.o.y && mouse.y < b.o.y + b.h) hovered = int(i);
    }
    ImGui::Dummy(ImVec2(14 + steps.size() * (b.bar_w + b.gap) + 10, b.h + BarScale::kStrip + 1));
    if (hovered >= 0 && ImGui::IsWindowHovered()) {
        ImGui::SetTooltip("%s\n(click to show this step's tree)", step_tooltip(steps[hovered]).c_str());
        if (ImGui::IsMouseClicked(0)) app.selected_step = hovered;
    }
    if (app.selected_step < 0 && app.worker.busy()) ImGui::SetScrollHereX(1.0f);
    app.audit_window();
    ImGui::EndChild();
}

}  // namespace

void draw_timeline_panel(ChatApp& app) {
    draw_timeline_header(app, app.reader.steps());
    draw_step_bars(app, app.reader.steps());
}

}  // namespace medusa::chat
