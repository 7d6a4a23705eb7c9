#include "rejection_view.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>

namespace medusa::chat {

namespace {

constexpr ImU32 kP = IM_COL32(100, 160, 240, 255), kQ = IM_COL32(240, 160, 70, 255), kR = IM_COL32(110, 200, 120, 255);

void swatch(ImU32 color, const char* label) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float s = ImGui::GetTextLineHeight() * 0.7f;
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + 3), ImVec2(p.x + s, p.y + 3 + s), color, 2);
    ImGui::Dummy(ImVec2(s + 2, s));
    ImGui::SameLine();
    ImGui::TextUnformatted(label);
}

}  // namespace

void draw_rejection_view(const StepRecord& r) {
    const auto& bars = r.trace.rejection;
    if (bars.empty()) return;
    if (!ImGui::CollapsingHeader("At the rejection: p, q and the residual", ImGuiTreeNodeFlags_DefaultOpen)) return;
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("The draft's token was refused (u > p/q), so the model's own token was drawn from the residual "
                        "norm(max(0, p - q)): what p gives beyond what q already proposed. Outlined: the token drawn.");
    ImGui::PopTextWrapPos();
    swatch(kP, "p (target)");
    ImGui::SameLine();
    swatch(kQ, "q (drafter)");
    ImGui::SameLine();
    swatch(kR, "residual");
    float top = 0;
    for (const RejectionBar& b : bars) top = std::max({top, b.p, b.q, b.residual});
    if (top <= 0) return;
    const float font = ImGui::GetFontSize(), h = 64, avail = ImGui::GetContentRegionAvail().x;
    const float slot = std::clamp(avail / float(bars.size()), 24.0f, 90.0f), w = std::max(3.0f, (slot - 10) / 3);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 o = ImGui::GetCursorScreenPos(), mouse = ImGui::GetIO().MousePos;
    int hovered = -1;
    for (size_t i = 0; i < bars.size(); ++i) {
        const RejectionBar& b = bars[i];
        const float x = o.x + float(i) * slot, base = o.y + h;
        const float values[3] = {b.p, b.q, b.residual};
        const ImU32 colors[3] = {kP, kQ, kR};
        for (int k = 0; k < 3; ++k)
            dl->AddRectFilled(ImVec2(x + k * w, base - h * values[k] / top), ImVec2(x + (k + 1) * w - 1, base), colors[k]);
        if (b.token == r.trace.bonus)
            dl->AddRect(ImVec2(x - 2, o.y - 2), ImVec2(x + 3 * w + 1, base + font + 3), IM_COL32_WHITE, 3, 0, 1.5f);
        std::string label = i < r.rejection_text.size() ? "'" + r.rejection_text[i] + "'" : std::to_string(b.token);
        while (label.size() > 1 && ImGui::CalcTextSize(label.c_str()).x > slot - 2) label.pop_back();
        dl->AddText(ImVec2(x, base + 2), IM_COL32(200, 200, 210, 255), label.c_str());
        if (mouse.x >= x && mouse.x < x + slot && mouse.y >= o.y && mouse.y < base + font + 4) hovered = int(i);
    }
    ImGui::Dummy(ImVec2(slot * float(bars.size()), h + font + 6));
    if (hovered >= 0 && ImGui::IsWindowHovered()) {
        const RejectionBar& b = bars[size_t(hovered)];
        ImGui::SetTooltip("%s: p %.3f, q %.3f, residual %.3f%s",
                          size_t(hovered) < r.rejection_text.size() ? ("'" + r.rejection_text[size_t(hovered)] + "'").c_str() : "",
                          b.p, b.q, b.residual, b.token == r.trace.bonus ? " (drawn)" : "");
    }
}

}  // namespace medusa::chat
