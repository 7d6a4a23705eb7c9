// The faces the app draws with: DejaVu Sans (the interface's, loaded first so it stays ImGui's
// default), its bold (also larger, for headings), oblique and bold oblique, and DejaVu Sans Mono
// for code, each with the few
// symbols a chat shows beyond Latin-1 (bullets, rules, U+FFFD). A face whose file is missing falls
// back to the default one.
#pragma once
#include <cstdint>

struct ImFont;

namespace medusa::chat {

// Adds the faces to ImGui's font atlas (before it is built).
void load_chat_fonts(float px);
// The face for a set of MarkdownStyle flags (the default font before load_chat_fonts); a heading
// of level 1 to 3 (`heading`) gets a larger bold face, 1.45, 1.25 and 1.1 times the text's size.
ImFont* font_for_style(uint8_t style, uint8_t heading = 0);

}  // namespace medusa::chat
