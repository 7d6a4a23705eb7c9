// Charts (app/charts) painted with ImGui, from the same layout the CLI's PNG and SVG files use.
#pragma once
#include <vector>

#include "chart.h"

namespace medusa::chat {

// One chart in a width x height box at the cursor.
void draw_chart(const charts::Chart& chart, float width, float height);
// Charts in one column, or two where the panel is wide enough, each `height` tall.
void draw_charts(const std::vector<charts::Chart>& charts, float height);

}  // namespace medusa::chat
