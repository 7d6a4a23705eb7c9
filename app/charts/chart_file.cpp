#include "chart_file.h"

#include <cairo-svg.h>
#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "chart_layout.h"
#include "model/atomic_file.h"

namespace medusa::charts {

namespace {

constexpr float kCellW = 560, kCellH = 340, kHeadingH = 34;

void set_color(cairo_t* cr, uint32_t c) {
    cairo_set_source_rgba(cr, ((c >> 16) & 255) / 255.0, ((c >> 8) & 255) / 255.0, (c & 255) / 255.0,
                          ((c >> 24) & 255) / 255.0);
}

void set_font(cairo_t* cr, Shape::Font f, const ChartTheme& t) {
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                           f == Shape::Font::Title ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, f == Shape::Font::Small ? t.small_px : f == Shape::Font::Title ? t.title_px : t.normal_px);
}

void paint(cairo_t* cr, const std::vector<Shape>& shapes, const ChartTheme& theme) {
    for (const Shape& s : shapes) {
        set_color(cr, s.color);
        switch (s.kind) {
            case Shape::Kind::Rect:
                cairo_rectangle(cr, s.a.x, s.a.y, s.b.x - s.a.x, s.b.y - s.a.y);
                cairo_fill(cr);
                break;
            case Shape::Kind::Line: {
                const double dash[] = {5, 4};
                cairo_set_dash(cr, dash, s.dashed ? 2 : 0, 0);
                cairo_set_line_width(cr, s.width);
                cairo_move_to(cr, s.a.x, s.a.y);
                cairo_line_to(cr, s.b.x, s.b.y);
                cairo_stroke(cr);
                cairo_set_dash(cr, dash, 0, 0);
                break;
            }
            case Shape::Kind::Marker:
                cairo_arc(cr, s.a.x, s.a.y, s.width, 0, 2 * M_PI);
                cairo_fill(cr);
                break;
            case Shape::Kind::Text: {
                set_font(cr, s.font, theme);
                cairo_font_extents_t fe;
                cairo_text_extents_t te;
                cairo_font_extents(cr, &fe);
                cairo_text_extents(cr, s.text.c_str(), &te);
                const double w = te.x_advance;
                const double x = s.align == Shape::Align::Left ? s.a.x : s.align == Shape::Align::Center ? s.a.x - w / 2 : s.a.x - w;
                cairo_move_to(cr, x, s.a.y + fe.ascent);
                cairo_show_text(cr, s.text.c_str());
                break;
            }
        }
    }
}

// Cairo's output goes to memory; write_file_atomically puts it on disk whole or not at all.
cairo_status_t append_bytes(void* out, const unsigned char* data, unsigned int length) {
    static_cast<std::string*>(out)->append(reinterpret_cast<const char*>(data), length);
    return CAIRO_STATUS_SUCCESS;
}

void check(cairo_status_t status, const std::string& path) {
    if (status != CAIRO_STATUS_SUCCESS)
        throw std::runtime_error("cannot write " + path + ": " + cairo_status_to_string(status));
}

}  // namespace

void write_charts(const std::vector<Chart>& charts, const std::string& heading, const std::string& path) {
    const std::string ext = std::filesystem::path(path).extension().string();
    if (ext != ".png" && ext != ".svg") throw std::runtime_error(path + ": charts are written as .png or .svg, not '" + ext + "'");
    if (charts.empty()) throw std::runtime_error(path + ": no charts to write");
    const int cols = charts.size() > 1 ? 2 : 1, rows = int((charts.size() + cols - 1) / cols);
    const double width = cols * kCellW, height = kHeadingH + rows * kCellH;
    std::string bytes;
    cairo_surface_t* surface = ext == ".svg" ? cairo_svg_surface_create_for_stream(append_bytes, &bytes, width, height)
                                             : cairo_image_surface_create(CAIRO_FORMAT_ARGB32, int(width), int(height));
    cairo_t* cr = cairo_create(surface);
    const ChartTheme theme = ChartTheme::light();
    set_color(cr, theme.background);
    cairo_paint(cr);
    set_color(cr, theme.text);
    set_font(cr, Shape::Font::Title, theme);
    cairo_move_to(cr, 10, 24);
    cairo_show_text(cr, heading.c_str());
    const TextWidth text_width = [&](const std::string& s, Shape::Font f) {
        set_font(cr, f, theme);
        cairo_text_extents_t te;
        cairo_text_extents(cr, s.c_str(), &te);
        return float(te.x_advance);
    };
    for (size_t i = 0; i < charts.size(); ++i) {
        const float x = float(i % cols) * kCellW, y = kHeadingH + float(i / cols) * kCellH;
        paint(cr, layout_chart(charts[i], x + 4, y + 4, kCellW - 8, kCellH - 8, theme, text_width), theme);
    }
    cairo_status_t status = cairo_status(cr);
    cairo_destroy(cr);
    if (status == CAIRO_STATUS_SUCCESS && ext == ".png")
        status = cairo_surface_write_to_png_stream(surface, append_bytes, &bytes);
    cairo_surface_finish(surface);  // an SVG surface writes its document here
    if (status == CAIRO_STATUS_SUCCESS) status = cairo_surface_status(surface);
    cairo_surface_destroy(surface);
    check(status, path);
    write_file_atomically(path, bytes);
}

}  // namespace medusa::charts
