#include "chat_fonts.h"

#include <imgui.h>

#include <cmath>
#include <filesystem>

#include "markdown_text.h"

namespace medusa::chat {

namespace {

constexpr float kHeadingScale[] = {1.45f, 1.25f, 1.1f};  // levels 1, 2, 3; deeper ones are bold text

struct Faces {
    ImFont *regular = nullptr, *bold = nullptr, *italic = nullptr, *bold_italic = nullptr, *mono = nullptr;
    ImFont* heading[3] = {};
};
Faces faces;

ImFont* add_face(const char* file, float px, const ImWchar* ranges) {
    const std::string path = std::string("/usr/share/fonts/truetype/dejavu/") + file;
    if (!std::filesystem::exists(path)) return nullptr;
    return ImGui::GetIO().Fonts->AddFontFromFileTTF(path.c_str(), px, nullptr, ranges);
}

}  // namespace

void load_chat_fonts(float px) {
    // Kept until the atlas is built (ImGui keeps the pointer).
    static ImVector<ImWchar> ranges;
    if (ranges.empty()) {
        ImFontGlyphRangesBuilder b;
        b.AddRanges(ImGui::GetIO().Fonts->GetGlyphRangesDefault());
        b.AddText("\xE2\x80\xA2\xE2\x94\x80\xEF\xBF\xBD\xE2\x80\xA6");  // bullet, rule, U+FFFD, ellipsis
        b.BuildRanges(&ranges);
    }
    faces.regular = add_face("DejaVuSans.ttf", px, ranges.Data);
    if (!faces.regular) faces.regular = ImGui::GetIO().Fonts->AddFontDefault();  // stays the default face
    faces.bold = add_face("DejaVuSans-Bold.ttf", px, ranges.Data);
    faces.italic = add_face("DejaVuSans-Oblique.ttf", px, ranges.Data);
    faces.bold_italic = add_face("DejaVuSans-BoldOblique.ttf", px, ranges.Data);
    faces.mono = add_face("DejaVuSansMono.ttf", px, ranges.Data);
    for (int level = 0; level < 3; ++level)
        faces.heading[level] = add_face("DejaVuSans-Bold.ttf", std::round(px * kHeadingScale[level]), ranges.Data);
}

ImFont* font_for_style(uint8_t style, uint8_t heading) {
    ImFont* f = nullptr;
    if (heading >= 1 && heading <= 3) f = faces.heading[heading - 1];
    else if (style & (kMdCode | kMdCodeBlock)) f = faces.mono;
    else if ((style & kMdStrong) && (style & kMdEmphasis)) f = faces.bold_italic;
    else if (style & kMdStrong) f = faces.bold;
    else if (style & kMdEmphasis) f = faces.italic;
    return f ? f : ImGui::GetFont();
}

}  // namespace medusa::chat
