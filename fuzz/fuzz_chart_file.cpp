// libFuzzer target: chart files (app/charts/bench_charts.h), `medusa bench --json` output and
// tune-tree's tree.json as `medusa plot` and the app's charts tab read them. Any bytes either give
// charts or are refused with one FormatError naming the file; every chart lays out with finite
// coordinates, in shapes and text measurements linear in its labels and values.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "bench_charts.h"
#include "chart_layout.h"
#include "fuzz_support.h"
#include "model/json_file.h"
#include "model/model_file.h"

using medusa::fuzz::check;
using namespace medusa::charts;

namespace {

bool finite(Point p) { return std::isfinite(p.x) && std::isfinite(p.y); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const char* text = reinterpret_cast<const char*>(data);
    std::vector<Chart> charts;
    try {
        charts = charts_from_json(medusa::parse_json_text(text, text + size, "fuzz.json"), "fuzz.json");
    } catch (const medusa::FormatError& e) {
        check(std::string(e.what()).rfind("fuzz.json: ", 0) == 0);
        return 0;
    }
    check(!charts.empty() && charts.size() <= 3);
    for (const Chart& c : charts) {
        size_t measured = 0;
        const TextWidth width = [&](const std::string& s, Shape::Font) { return ++measured, 7.0f * float(s.size()); };
        const std::vector<Shape> shapes = layout_chart(c, 4, 38, 552, 332, ChartTheme{}, width);
        size_t values = 0;
        for (const ChartSeries& s : c.series) values += s.values.size();
        const size_t labels = c.labels.size(), series = c.series.size();
        // The frame, titles, legend, ticks and axes; two shapes per value (a bar and its label, or
        // a line and a marker); one per label. Ticks are at most 5 (nice_ticks' count + 1).
        check(shapes.size() <= 32 + 2 * series + 2 * values + labels);
        // A category label cut to its bar is found in about log2 of its length measurements.
        check(measured <= 16 + series + values + 68 * labels);
        for (const Shape& s : shapes) check(finite(s.a) && finite(s.b) && std::isfinite(s.width));
    }
    return 0;
}
