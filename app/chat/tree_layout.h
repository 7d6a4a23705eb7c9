// Where each node of a candidate tree goes: depth down (one row per Medusa head), siblings left
// to right by rank.
#pragma once
#include <vector>

#include "decode/step_trace.h"

namespace medusa::chat {

struct TreeLayout {
    std::vector<float> column;  // per node, in columns (0 = leftmost)
    std::vector<char> visible;  // per node: drawn (the accepted view hides subtrees of rejected nodes)
    std::vector<int> hidden;    // per visible node: how many of its descendants are not drawn
    int columns = 0;            // width in columns
    int rows = 0;               // max drawn depth + 1
};

// Every node: each leaf its own column and a parent centred over its children.
TreeLayout layout_tree(const std::vector<TreeNodeTrace>& nodes);

// What a learner needs: the accepted path and, under each of its nodes, every guess for the next
// position (that row's candidates, ranks left to right). Subtrees under rejected guesses are
// folded into a count. The width is the largest sibling group (10 for top-10 heads) however
// large the tree, so token text stays readable. Nodes with `accepted` set form the path.
TreeLayout layout_accepted_view(const std::vector<TreeNodeTrace>& nodes);

}  // namespace medusa::chat
