#include "chart_layout.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace medusa::charts {

namespace {

using Font = Shape::Font;
using Align = Shape::Align;

Shape text(std::string s, float x, float y, uint32_t color, Font font, Align align = Align::Left) {
    Shape t;
    t.kind = Shape::Kind::Text;
    t.text = std::move(s);
    t.a = {x, y};
    t.color = color;
    t.font = font;
    t.align = align;
    return t;
}

Shape line(float x0, float y0, float x1, float y1, uint32_t color, float width, bool dashed = false) {
    Shape l;
    l.kind = Shape::Kind::Line;
    l.a = {x0, y0};
    l.b = {x1, y1};
    l.color = color;
    l.width = width;
    l.dashed = dashed;
    return l;
}

Shape rect(float x0, float y0, float x1, float y1, uint32_t color) {
    Shape r;
    r.kind = Shape::Kind::Rect;
    r.a = {x0, y0};
    r.b = {x1, y1};
    r.color = color;
    return r;
}

Shape marker(float x, float y, float radius, uint32_t color) {
    Shape m;
    m.kind = Shape::Kind::Marker;
    m.a = {x, y};
    m.width = radius;
    m.color = color;
    return m;
}

// Tick and value labels: as few digits as the step needs.
std::string number(double v, double step) {
    char buf[32];
    if (std::fabs(v) >= 10000) std::snprintf(buf, sizeof buf, "%.0fk", v / 1000);
    else if (step >= 1 || v == 0) std::snprintf(buf, sizeof buf, "%.0f", v);
    else if (step >= 0.1) std::snprintf(buf, sizeof buf, "%.1f", v);
    else std::snprintf(buf, sizeof buf, "%.2f", v);
    return buf;
}

// `s` cut to `width` with "..", for category labels longer than their bar group: the longest
// prefix that fits, found in log2(size) measurements (a label may be as long as its file).
std::string fit(const std::string& s, float width, const TextWidth& w) {
    if (w(s, Font::Small) <= width) return s;
    auto cut = [&](size_t n) { return s.substr(0, n) + ".."; };
    size_t lo = 0, hi = s.size();  // cut(lo) fits or lo is 0; cut(hi) does not fit or hi is the whole label
    while (hi - lo > 1) {
        const size_t mid = lo + (hi - lo) / 2;
        (w(cut(mid), Font::Small) <= width ? lo : hi) = mid;
    }
    return lo > 0 ? cut(lo) : "";
}

float px(const ChartTheme& t, Font f) { return f == Font::Small ? t.small_px : f == Font::Title ? t.title_px : t.normal_px; }

}  // namespace

ChartTheme ChartTheme::light() {
    ChartTheme t;
    t.background = 0xffffffff;
    t.axis = 0xff606068;
    t.grid = 0xffe2e2e8;
    t.text = 0xff202028;
    t.muted = 0xff606070;
    t.reference = 0xffd06000;
    return t;
}

uint32_t series_color(int i) {
    static const uint32_t colors[] = {0xff78b5ff, 0xff66db73, 0xfff2d94d, 0xfff278cc,
                                      0xffad8fff, 0xff4ddbdb, 0xffd9d9d9, 0xff99cc99};
    return colors[std::abs(i) % 8];
}

std::vector<double> nice_ticks(double max, int count) {
    count = std::clamp(count, 1, kMaxTickCount);
    // Below 1e-300, 10^k of the step may be denormal or zero and the ticks would never reach max;
    // far above, they would overflow to infinity.
    if (!(max >= 1e-300 && max <= 1e300)) max = 1;
    const double raw = max / count;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = mag;
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (m * mag >= raw) {
            step = m * mag;
            break;
        }
    // step >= max / count, so tick `count` reaches max: count + 1 ticks at most.
    std::vector<double> ticks;
    for (int i = 0; i <= count; ++i) {
        ticks.push_back(i * step);
        if (ticks.back() >= max - 1e-9 * max) break;
    }
    return ticks;
}

namespace {

// One chart being laid out: its shapes so far and, once the axes are placed, its plot area.
struct Plot {
    const Chart& c;
    const ChartTheme& theme;
    const TextWidth& tw;
    float x, y, w, h;
    std::vector<Shape> out;
    float sw = 0;                                   // the small font's height
    float top = 0, bottom = 0, left = 0, right = 0; // the plot area
    float label_y = 0;                              // the x labels' row
    double ymax = 1;
    int n = 0;                                      // x positions
    std::vector<float> centers;                     // each x position's centre
    float slot = 0;                                 // the distance between neighbouring ones

    static constexpr float pad = 6, gap = 3;

    float ypos(double v) const { return float(bottom - (bottom - top) * std::clamp(v / ymax, 0.0, 1.0)); }
};

// The title, the legend (one swatch per series when there are several, and the reference line) and
// the y axis' title, from the top down.
void layout_heading(Plot& p) {
    const Chart& c = p.c;
    const ChartTheme& theme = p.theme;
    p.top = p.y + p.pad;
    p.out.push_back(text(c.title, p.x + p.pad, p.top, theme.text, Font::Title));
    p.top += px(theme, Font::Title) + p.gap;

    float lx = p.x + p.pad;
    const float sw = p.sw;
    auto legend = [&](const std::string& name, uint32_t color, bool dashed) {
        const float swatch = dashed ? 2 * sw : sw - 2;
        if (dashed) p.out.push_back(line(lx, p.top + sw / 2 + 1, lx + swatch, p.top + sw / 2 + 1, color, 2, true));
        else p.out.push_back(rect(lx, p.top + 2, lx + swatch, p.top + sw, color));
        p.out.push_back(text(name, lx + swatch + 4, p.top, theme.muted, Font::Small));
        lx += swatch + 4 + p.tw(name, Font::Small) + 12;
    };
    if (c.series.size() > 1)
        for (size_t i = 0; i < c.series.size(); ++i) legend(c.series[i].name, series_color(int(i)), false);
    if (std::isfinite(c.reference) && !c.reference_label.empty()) legend(c.reference_label, theme.reference, true);
    if (lx > p.x + p.pad) p.top += sw + p.gap;
    if (!c.y_title.empty()) {
        p.out.push_back(text(c.y_title, p.x + p.pad, p.top, theme.muted, Font::Small));
        p.top += sw + p.gap;
    }
}

// The note and the x axis' title, from the bottom up, and the row of the x labels above them.
void layout_footing(Plot& p) {
    const Chart& c = p.c;
    p.bottom = p.y + p.h - p.pad;
    if (!c.note.empty()) {
        p.bottom -= p.sw;
        p.out.push_back(text(c.note, p.x + p.pad, p.bottom, p.theme.muted, Font::Small));
        p.bottom -= p.gap;
    }
    if (!c.x_title.empty()) {
        p.bottom -= p.sw;
        p.out.push_back(text(c.x_title, p.x + p.w / 2, p.bottom, p.theme.muted, Font::Small, Align::Center));
        p.bottom -= p.gap;
    }
    p.label_y = p.bottom - p.sw;
    p.bottom = p.label_y - p.gap;
}

// The y scale up to the largest value or the reference, its ticks and grid lines, and both axes.
// False when the area left is too small to draw anything readable.
bool layout_axes(Plot& p) {
    const Chart& c = p.c;
    double vmax = std::isfinite(c.reference) ? c.reference : 0;
    for (const auto& s : c.series)
        for (double v : s.values)
            if (std::isfinite(v)) vmax = std::max(vmax, v);
    const std::vector<double> ticks = nice_ticks(vmax * 1.15, 4);
    p.ymax = ticks.back();
    const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1;
    float axis_w = 0;
    for (double t : ticks) axis_w = std::max(axis_w, p.tw(number(t, step), Font::Small));
    p.left = p.x + p.pad + axis_w + 4;
    p.right = p.x + p.w - p.pad;
    if (p.bottom - p.top < 20 || p.right - p.left < 40) return false;

    for (double t : ticks) {
        const float ty = p.ypos(t);
        p.out.push_back(line(p.left, ty, p.right, ty, p.theme.grid, 1));
        p.out.push_back(
            text(number(t, step), p.left - 4, ty - p.sw / 2, p.theme.muted, Font::Small, Align::Right));
    }
    p.out.push_back(line(p.left, p.bottom, p.right, p.bottom, p.theme.axis, 1));
    p.out.push_back(line(p.left, p.top, p.left, p.bottom, p.theme.axis, 1));
    return true;
}

// Where each label's values stand: evenly spaced slots for bars (or lines without x values), else
// at their x values (log2 with log_x), inset from the axes.
void place_x(Plot& p) {
    const Chart& c = p.c;
    const int n = p.n;
    const float left = p.left, right = p.right;
    p.centers.assign(n, 0.0f);
    p.slot = (right - left) / n;
    if (c.kind == Chart::Kind::Bars || c.x.size() != size_t(n)) {
        for (int i = 0; i < n; ++i) p.centers[i] = left + p.slot * (i + 0.5f);
        return;
    }
    auto xs = [&](double v) { return c.log_x ? std::log2(std::max(v, 1e-9)) : v; };
    double lo = xs(c.x.front()), hi = xs(c.x.front());
    for (double v : c.x) lo = std::min(lo, xs(v)), hi = std::max(hi, xs(v));
    const float inset = 12;
    for (int i = 0; i < n; ++i)
        p.centers[i] = hi > lo ? float(left + inset + (right - left - 2 * inset) * (xs(c.x[i]) - lo) / (hi - lo))
                               : left + (right - left) / 2;
    p.slot = n > 1 ? (p.centers[n - 1] - p.centers[0]) / (n - 1) : right - left;
}

// Grouped bars, each labelled with its value where the label fits.
void draw_bars(Plot& p) {
    const Chart& c = p.c;
    const int ns = std::max<int>(1, int(c.series.size()));
    const float group = p.slot * 0.72f, bw = group / ns;
    for (int si = 0; si < int(c.series.size()); ++si)
        for (int i = 0; i < p.n && i < int(c.series[si].values.size()); ++i) {
            const double v = c.series[si].values[i];
            if (!std::isfinite(v)) continue;
            const float x0 = p.centers[i] - group / 2 + bw * si, x1 = x0 + bw - 1;
            p.out.push_back(rect(x0, p.ypos(v), x1, p.bottom, series_color(si)));
            const std::string label = number(v, v >= 10 ? 1 : 0.01);
            if (p.tw(label, Font::Small) <= bw + 8 && p.ypos(v) - p.sw - 1 >= p.top)
                p.out.push_back(
                    text(label, (x0 + x1) / 2, p.ypos(v) - p.sw - 1, p.theme.text, Font::Small, Align::Center));
        }
}

// A line with markers per series, broken where a value is missing.
void draw_lines(Plot& p) {
    const Chart& c = p.c;
    for (int si = 0; si < int(c.series.size()); ++si) {
        const auto& v = c.series[si].values;
        const uint32_t color = series_color(si);
        for (int i = 0; i + 1 < p.n && i + 1 < int(v.size()); ++i)
            if (std::isfinite(v[i]) && std::isfinite(v[i + 1]))
                p.out.push_back(line(p.centers[i], p.ypos(v[i]), p.centers[i + 1], p.ypos(v[i + 1]), color, 2));
        for (int i = 0; i < p.n && i < int(v.size()); ++i)
            if (std::isfinite(v[i])) p.out.push_back(marker(p.centers[i], p.ypos(v[i]), 2.5f, color));
    }
}

// The highlighted value of the first series, marked and labelled, and the dashed reference line.
void draw_marks(Plot& p) {
    const Chart& c = p.c;
    if (c.highlight >= 0 && c.highlight < p.n && !c.series.empty() &&
        c.highlight < int(c.series[0].values.size()) && std::isfinite(c.series[0].values[c.highlight])) {
        const double v = c.series[0].values[c.highlight];
        const float hx = p.centers[c.highlight], hy = p.ypos(v);
        p.out.push_back(marker(hx, hy, 5, p.theme.reference));
        const std::string label = number(v, v >= 10 ? 1 : 0.01);
        const float lw = p.tw(label, Font::Small);
        const float tx = std::clamp(hx, p.left + lw / 2, p.right - lw / 2);
        p.out.push_back(
            text(label, tx, std::max(p.top, hy - p.sw - 6), p.theme.reference, Font::Small, Align::Center));
    }
    if (std::isfinite(c.reference))
        p.out.push_back(
            line(p.left, p.ypos(c.reference), p.right, p.ypos(c.reference), p.theme.reference, 1.5f, true));
}

// x labels, thinned so none overlaps its neighbour; the highlighted one is always kept.
void draw_x_labels(Plot& p) {
    const Chart& c = p.c;
    float last_right = -1e9f;
    for (int i = 0; i < p.n; ++i) {
        const std::string label = c.kind == Chart::Kind::Bars ? fit(c.labels[i], p.slot - 2, p.tw) : c.labels[i];
        const float lw = p.tw(label, Font::Small);
        const float l0 = p.centers[i] - lw / 2;
        const bool keep = i == c.highlight || (l0 >= last_right + 4 && p.centers[i] + lw / 2 <= p.x + p.w);
        if (!keep || label.empty()) continue;
        p.out.push_back(text(label, p.centers[i], p.label_y, i == c.highlight ? p.theme.reference : p.theme.muted,
                             Font::Small, Align::Center));
        last_right = p.centers[i] + lw / 2;
    }
}

}  // namespace

std::vector<Shape> layout_chart(const Chart& c, float x, float y, float w, float h, const ChartTheme& theme,
                                const TextWidth& tw) {
    Plot p{c, theme, tw, x, y, w, h, {}};
    p.sw = px(theme, Font::Small);
    p.out.push_back(rect(x, y, x + w, y + h, theme.background));
    layout_heading(p);
    layout_footing(p);
    // Too small to draw anything readable: the title alone.
    if (!layout_axes(p)) return p.out;
    p.n = int(c.labels.size());
    if (p.n == 0) return p.out;
    place_x(p);
    if (c.kind == Chart::Kind::Bars) draw_bars(p);
    else draw_lines(p);
    draw_marks(p);
    draw_x_labels(p);
    return p.out;
}

}  // namespace medusa::charts
