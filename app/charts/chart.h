// A chart as data: the numbers, titles and marks of one figure. The CLI paints charts into PNG or
// SVG files and the app paints the same charts in its metrics panel; both go through chart_layout,
// so a figure looks the same wherever it is drawn.
#pragma once
#include <string>
#include <vector>

namespace medusa::charts {

struct ChartSeries {
    std::string name;
    std::vector<double> values;  // one per x label
};

struct Chart {
    enum class Kind { Bars, Lines };
    Kind kind = Kind::Bars;
    std::string title, x_title, y_title;
    std::vector<std::string> labels;  // the x axis: one category per bar group, or one tick per point
    std::vector<double> x;            // Lines only: where each point sits (empty: evenly spaced)
    bool log_x = false;               // Lines only: x on a log2 scale (block sizes 1..128)
    std::vector<ChartSeries> series;
    // A horizontal line to read the bars against, e.g. plain decoding's speed; unset when NaN.
    double reference = 0.0 / 0.0;
    std::string reference_label;
    int highlight = -1;  // the label to mark (the budget tune-tree chose), -1 for none
    std::string note;    // one line under the chart: what to read from it
};

}  // namespace medusa::charts
