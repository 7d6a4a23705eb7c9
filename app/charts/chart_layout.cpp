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

// `s` cut to `width` with "..", for category labels longer than their bar group.
std::string fit(const std::string& s, float width, const TextWidth& w) {
    if (w(s, Font::Small) <= width) return s;
    for (size_t n = s.size(); n > 1; --n) {
        std::string cut = s.substr(0, n - 1) + "..";
        if (w(cut, Font::Small) <= width) return cut;
    }
    return "";
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
    if (!(max > 0) || !std::isfinite(max)) max = 1;
    const double raw = max / std::max(1, count);
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = mag;
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (m * mag >= raw) {
            step = m * mag;
            break;
        }
    std::vector<double> ticks;
    for (int i = 0; ticks.empty() || ticks.back() < max - 1e-9 * max; ++i) ticks.push_back(i * step);
    return ticks;
}

std::vector<Shape> layout_chart(const Chart& c, float x, float y, float w, float h, const ChartTheme& theme,
                                const TextWidth& tw) {
    std::vector<Shape> out;
    out.push_back(rect(x, y, x + w, y + h, theme.background));
    const float pad = 6, gap = 3;
    float top = y + pad;
    out.push_back(text(c.title, x + pad, top, theme.text, Font::Title));
    top += px(theme, Font::Title) + gap;

    // The legend: one swatch per series (when there are several) and the reference line.
    float lx = x + pad;
    const float sw = px(theme, Font::Small);
    auto legend = [&](const std::string& name, uint32_t color, bool dashed) {
        const float swatch = dashed ? 2 * sw : sw - 2;
        if (dashed) out.push_back(line(lx, top + sw / 2 + 1, lx + swatch, top + sw / 2 + 1, color, 2, true));
        else out.push_back(rect(lx, top + 2, lx + swatch, top + sw, color));
        out.push_back(text(name, lx + swatch + 4, top, theme.muted, Font::Small));
        lx += swatch + 4 + tw(name, Font::Small) + 12;
    };
    if (c.series.size() > 1)
        for (size_t i = 0; i < c.series.size(); ++i) legend(c.series[i].name, series_color(int(i)), false);
    if (std::isfinite(c.reference) && !c.reference_label.empty()) legend(c.reference_label, theme.reference, true);
    if (lx > x + pad) top += sw + gap;
    if (!c.y_title.empty()) {
        out.push_back(text(c.y_title, x + pad, top, theme.muted, Font::Small));
        top += sw + gap;
    }

    float bottom = y + h - pad;
    if (!c.note.empty()) {
        bottom -= sw;
        out.push_back(text(c.note, x + pad, bottom, theme.muted, Font::Small));
        bottom -= gap;
    }
    if (!c.x_title.empty()) {
        bottom -= sw;
        out.push_back(text(c.x_title, x + w / 2, bottom, theme.muted, Font::Small, Align::Center));
        bottom -= gap;
    }
    const float label_y = bottom - sw;  // the x labels' row
    bottom = label_y - gap;

    double vmax = std::isfinite(c.reference) ? c.reference : 0;
    for (const auto& s : c.series)
        for (double v : s.values)
            if (std::isfinite(v)) vmax = std::max(vmax, v);
    const std::vector<double> ticks = nice_ticks(vmax * 1.15, 4);
    const double ymax = ticks.back();
    const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1;
    float axis_w = 0;
    for (double t : ticks) axis_w = std::max(axis_w, tw(number(t, step), Font::Small));
    const float left = x + pad + axis_w + 4, right = x + w - pad;
    // Too small to draw anything readable: the title alone.
    if (bottom - top < 20 || right - left < 40) return out;
    auto ypos = [&](double v) { return float(bottom - (bottom - top) * std::clamp(v / ymax, 0.0, 1.0)); };

    for (double t : ticks) {
        const float ty = ypos(t);
        out.push_back(line(left, ty, right, ty, theme.grid, 1));
        out.push_back(text(number(t, step), left - 4, ty - sw / 2, theme.muted, Font::Small, Align::Right));
    }
    out.push_back(line(left, bottom, right, bottom, theme.axis, 1));
    out.push_back(line(left, top, left, bottom, theme.axis, 1));

    const int n = int(c.labels.size());
    if (n == 0) return out;
    std::vector<float> centers(n);
    float slot = (right - left) / n;
    if (c.kind == Chart::Kind::Bars || c.x.size() != size_t(n)) {
        for (int i = 0; i < n; ++i) centers[i] = left + slot * (i + 0.5f);
    } else {
        auto xs = [&](double v) { return c.log_x ? std::log2(std::max(v, 1e-9)) : v; };
        double lo = xs(c.x.front()), hi = xs(c.x.front());
        for (double v : c.x) lo = std::min(lo, xs(v)), hi = std::max(hi, xs(v));
        const float inset = 12;
        for (int i = 0; i < n; ++i)
            centers[i] = hi > lo ? float(left + inset + (right - left - 2 * inset) * (xs(c.x[i]) - lo) / (hi - lo))
                                 : left + (right - left) / 2;
        slot = n > 1 ? (centers[n - 1] - centers[0]) / (n - 1) : right - left;
    }

    if (c.kind == Chart::Kind::Bars) {
        const int ns = std::max<int>(1, int(c.series.size()));
        const float group = slot * 0.72f, bw = group / ns;
        for (int si = 0; si < int(c.series.size()); ++si)
            for (int i = 0; i < n && i < int(c.series[si].values.size()); ++i) {
                const double v = c.series[si].values[i];
                if (!std::isfinite(v)) continue;
                const float x0 = centers[i] - group / 2 + bw * si, x1 = x0 + bw - 1;
                out.push_back(rect(x0, ypos(v), x1, bottom, series_color(si)));
                const std::string label = number(v, v >= 10 ? 1 : 0.01);
                if (tw(label, Font::Small) <= bw + 8 && ypos(v) - sw - 1 >= top)
                    out.push_back(text(label, (x0 + x1) / 2, ypos(v) - sw - 1, theme.text, Font::Small, Align::Center));
            }
    } else {
        for (int si = 0; si < int(c.series.size()); ++si) {
            const auto& v = c.series[si].values;
            const uint32_t color = series_color(si);
            for (int i = 0; i + 1 < n && i + 1 < int(v.size()); ++i)
                if (std::isfinite(v[i]) && std::isfinite(v[i + 1]))
                    out.push_back(line(centers[i], ypos(v[i]), centers[i + 1], ypos(v[i + 1]), color, 2));
            for (int i = 0; i < n && i < int(v.size()); ++i)
                if (std::isfinite(v[i])) out.push_back(marker(centers[i], ypos(v[i]), 2.5f, color));
        }
    }
    if (c.highlight >= 0 && c.highlight < n && !c.series.empty() &&
        c.highlight < int(c.series[0].values.size())) {
        const double v = c.series[0].values[c.highlight];
        const float hx = centers[c.highlight], hy = ypos(v);
        out.push_back(marker(hx, hy, 5, theme.reference));
        const std::string label = number(v, v >= 10 ? 1 : 0.01);
        const float lw = tw(label, Font::Small);
        const float tx = std::clamp(hx, left + lw / 2, right - lw / 2);
        out.push_back(text(label, tx, std::max(top, hy - sw - 6), theme.reference, Font::Small, Align::Center));
    }
    if (std::isfinite(c.reference)) out.push_back(line(left, ypos(c.reference), right, ypos(c.reference), theme.reference, 1.5f, true));

    // x labels, thinned so none overlaps its neighbour; the highlighted one is always kept.
    float last_right = -1e9f;
    for (int i = 0; i < n; ++i) {
        const std::string label = c.kind == Chart::Kind::Bars ? fit(c.labels[i], slot - 2, tw) : c.labels[i];
        const float lw = tw(label, Font::Small);
        const float l0 = centers[i] - lw / 2;
        const bool keep = i == c.highlight || (l0 >= last_right + 4 && centers[i] + lw / 2 <= x + w);
        if (!keep || label.empty()) continue;
        out.push_back(text(label, centers[i], label_y, i == c.highlight ? theme.reference : theme.muted, Font::Small,
                           Align::Center));
        last_right = centers[i] + lw / 2;
    }
    return out;
}

}  // namespace medusa::charts
