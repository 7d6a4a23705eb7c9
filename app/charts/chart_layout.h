// Turns a Chart into shapes in a box: rectangles, lines, markers and anchored text. Painters (cairo
// for files, ImGui for the app) only draw the shapes; scales, ticks and label placement are
// decided here once.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "chart.h"

namespace medusa::charts {

struct Point {
    float x = 0, y = 0;
};

// Colours as 0xAARRGGBB.
struct Shape {
    enum class Kind { Rect, Line, Marker, Text };
    enum class Align { Left, Center, Right };
    enum class Font { Small, Normal, Title };
    Kind kind = Kind::Rect;
    Point a, b;  // Rect: corners; Line: ends; Marker: centre; Text: top edge, at the left/centre/right
    uint32_t color = 0xffffffff;
    float width = 1;  // Line: stroke width; Marker: radius
    bool dashed = false;
    std::string text;
    Align align = Align::Left;
    Font font = Font::Normal;
};

struct ChartTheme {
    float small_px = 11, normal_px = 13, title_px = 15;  // font sizes the painter uses
    uint32_t background = 0xff181920, axis = 0xff8c8c96, grid = 0xff33343e, text = 0xffdcdce4,
             muted = 0xff9a9aa6, reference = 0xffff8c00;
    static ChartTheme light();  // for files: dark text on white
};

// The colour of series i (the app's palette order).
uint32_t series_color(int i);

// Widths of strings in the painter's font, so labels can be thinned out instead of overlapping.
using TextWidth = std::function<float(const std::string&, Shape::Font)>;

// The shapes of `chart` inside the box (x, y, w, h).
std::vector<Shape> layout_chart(const Chart& chart, float x, float y, float w, float h, const ChartTheme& theme,
                                const TextWidth& text_width);

// Axis ticks: "nice" steps (1, 2, 5 × 10^k) from 0 to at least `max`, about `count` of them and
// never more than count + 1 (count is taken within 1..kMaxTickCount). A `max` outside
// 1e-300..1e300 (NaN, infinite, not positive, denormal) gives the ticks of 0..1.
constexpr int kMaxTickCount = 100;
std::vector<double> nice_ticks(double max, int count);

}  // namespace medusa::charts
