#include "chart_view.h"

#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "chart_layout.h"

namespace medusa::chat {

namespace {

ImU32 to_imgui(uint32_t argb) {
    return IM_COL32((argb >> 16) & 255, (argb >> 8) & 255, argb & 255, (argb >> 24) & 255);
}

charts::ChartTheme theme() {
    charts::ChartTheme t;
    const float px = ImGui::GetFontSize();
    t.small_px = px * 0.85f;
    t.normal_px = px;
    t.title_px = px;
    return t;
}

float font_px(const charts::ChartTheme& t, charts::Shape::Font f) {
    return f == charts::Shape::Font::Small ? t.small_px : f == charts::Shape::Font::Title ? t.title_px : t.normal_px;
}

}  // namespace

void draw_chart(const charts::Chart& chart, float width, float height) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::Dummy(ImVec2(width, height));
    const charts::ChartTheme t = theme();
    ImFont* font = ImGui::GetFont();
    const charts::TextWidth text_width = [&](const std::string& s, charts::Shape::Font f) {
        return font->CalcTextSizeA(font_px(t, f), FLT_MAX, 0, s.c_str()).x;
    };
    ImDrawList* dl = ImGui::GetWindowDrawList();
    for (const charts::Shape& s : charts::layout_chart(chart, p.x, p.y, width, height, t, text_width)) {
        const ImU32 c = to_imgui(s.color);
        switch (s.kind) {
            case charts::Shape::Kind::Rect: dl->AddRectFilled(ImVec2(s.a.x, s.a.y), ImVec2(s.b.x, s.b.y), c); break;
            case charts::Shape::Kind::Line:
                if (!s.dashed) {
                    dl->AddLine(ImVec2(s.a.x, s.a.y), ImVec2(s.b.x, s.b.y), c, s.width);
                } else {
                    // ImGui draws no dashes: short segments along the line.
                    const float dx = s.b.x - s.a.x, dy = s.b.y - s.a.y, len = std::max(1.0f, std::hypot(dx, dy));
                    for (float d = 0; d < len; d += 9) {
                        const float e = std::min(len, d + 5);
                        dl->AddLine(ImVec2(s.a.x + dx * d / len, s.a.y + dy * d / len),
                                    ImVec2(s.a.x + dx * e / len, s.a.y + dy * e / len), c, s.width);
                    }
                }
                break;
            case charts::Shape::Kind::Marker: dl->AddCircleFilled(ImVec2(s.a.x, s.a.y), s.width, c); break;
            case charts::Shape::Kind::Text: {
                const float px = font_px(t, s.font);
                const float w = font->CalcTextSizeA(px, FLT_MAX, 0, s.text.c_str()).x;
                const float x = s.align == charts::Shape::Align::Left     ? s.a.x
                                : s.align == charts::Shape::Align::Center ? s.a.x - w / 2
                                                                          : s.a.x - w;
                dl->AddText(font, px, ImVec2(x, s.a.y), c, s.text.c_str());
                break;
            }
        }
    }
}

void draw_charts(const std::vector<charts::Chart>& list, float height) {
    const float avail = ImGui::GetContentRegionAvail().x;
    const int cols = avail >= 700 ? 2 : 1;
    const float gap = ImGui::GetStyle().ItemSpacing.x, w = (avail - gap * (cols - 1)) / cols;
    for (size_t i = 0; i < list.size(); ++i) {
        if (i % cols) ImGui::SameLine();
        draw_chart(list[i], w, height);
    }
}

}  // namespace medusa::chat
