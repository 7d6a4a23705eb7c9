// Charts painted into a PNG or SVG file with cairo: a grid of two columns under one heading.
// The file appears whole or not at all (painted in memory, then written by write_file_atomically).
#pragma once
#include <string>
#include <vector>

#include "chart.h"

namespace medusa::charts {

// The format follows the extension (.png or .svg); anything else, or a failed write, throws
// naming the path.
void write_charts(const std::vector<Chart>& charts, const std::string& heading, const std::string& path);

}  // namespace medusa::charts
