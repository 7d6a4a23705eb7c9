// Esc closes a dialog, as people expect of one: called while a popup is being drawn, true when
// Esc was pressed in it (the caller closes it as its Cancel or Close button would).
#pragma once
#include <imgui.h>

namespace medusa::chat {

inline bool close_on_escape() {
    return ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows) &&
           ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false);
}

}  // namespace medusa::chat
