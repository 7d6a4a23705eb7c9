#include "drafter_use.h"

#include <imgui.h>

#include "decode/decoding_kinds.h"
#include "palette.h"

namespace medusa::chat {

// Under the step controller the drafter changes from step to step (auto), or falls back to plain
// decoding: a strip under each bar says which drafted it, and this line which colour is which.
void draw_drafter_legend(const std::vector<StepRecord>& steps) {
    bool used[int(DrafterKind::Auto) + 1] = {};
    bool controlled = false;
    for (const auto& s : steps) {
        used[int(s.trace.drafter)] = true;
        controlled = controlled || s.controlled;
    }
    if (!controlled) return;
    ImGui::TextDisabled("Under each bar, its drafter:");
    for (int k = 0; k <= int(DrafterKind::Auto); ++k) {
        if (!used[k]) continue;
        const char* name = drafter_word(DrafterKind(k));
        const float h = ImGui::GetTextLineHeight();
        ImGui::SameLine();
        if (ImGui::GetContentRegionAvail().x < h + 8 + ImGui::CalcTextSize(name).x) ImGui::NewLine();
        const ImVec2 p = ImGui::GetCursorScreenPos();
        ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + h * 0.6f), ImVec2(p.x + h, p.y + h),
                                                  drafter_color(DrafterKind(k)));
        ImGui::Dummy(ImVec2(h, h));
        ImGui::SameLine(0, 3);
        ImGui::TextUnformatted(name);
    }
}

// Under the step controller, which drafter each step of this turn used (auto switches among them,
// any mode may fall back to plain decoding) and what each gave per step.
void draw_drafter_table(const std::vector<const StepRecord*>& turn) {
    struct Use {
        int steps = 0, tokens = 0;
    };
    Use use[int(DrafterKind::Auto) + 1];
    bool controlled = false;
    for (const StepRecord* s : turn) {
        controlled = controlled || s->controlled;
        Use& u = use[int(s->trace.drafter)];
        ++u.steps;
        u.tokens += int(s->trace.emitted.size());
    }
    if (!controlled) return;
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("Steps by drafter (the step controller's choices):");
    ImGui::PopTextWrapPos();
    if (!ImGui::BeginTable("drafters", 4, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) return;
    ImGui::TableSetupColumn("drafter", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("steps", ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableSetupColumn("tokens", ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableSetupColumn("tok/step", ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableHeadersRow();
    for (int k = 0; k <= int(DrafterKind::Auto); ++k) {
        const Use& u = use[k];
        if (u.steps == 0) continue;
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(drafter_word(DrafterKind(k)));
        ImGui::TableNextColumn();
        ImGui::Text("%d", u.steps);
        ImGui::TableNextColumn();
        ImGui::Text("%d", u.tokens);
        ImGui::TableNextColumn();
        ImGui::Text("%.2f", double(u.tokens) / u.steps);
    }
    ImGui::EndTable();
}

}  // namespace medusa::chat
