// Where each node of a candidate tree goes: depth down (one row per Medusa head), siblings left
// to right by rank, each leaf its own column and a parent centred over its children.
#pragma once
#include <vector>

#include "decode/step_trace.h"

namespace medusa::chat {

struct TreeLayout {
    std::vector<float> column;  // per node, in leaf columns (0 = leftmost)
    int columns = 0;            // leaf count
    int rows = 0;               // max depth + 1
};

TreeLayout layout_tree(const std::vector<TreeNodeTrace>& nodes);

}  // namespace medusa::chat
