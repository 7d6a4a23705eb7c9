// Rows of buttons and checkboxes that wrap: an item goes beside the one before it where the line
// has room for it, else starts the next line, so that a narrow panel (1024x700 and up) never cuts
// a control off at its right edge.
#pragma once
#include <imgui.h>

namespace medusa::chat {

inline float button_width(const char* label) {
    return ImGui::CalcTextSize(label, nullptr, true).x + 2 * ImGui::GetStyle().FramePadding.x;
}
inline float checkbox_width(const char* label) {
    return ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label, nullptr, true).x;
}
// Called between two items: the next one, `width` px wide, beside the last or on a new line.
inline void flow(float width) {
    ImGui::SameLine();
    if (ImGui::GetContentRegionAvail().x < width) ImGui::NewLine();
}

}  // namespace medusa::chat
