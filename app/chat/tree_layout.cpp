#include "tree_layout.h"

#include <algorithm>
#include <functional>

namespace medusa::chat {

TreeLayout layout_tree(const std::vector<TreeNodeTrace>& nodes) {
    TreeLayout L;
    const int n = int(nodes.size());
    L.column.assign(n, 0.0f);
    if (n == 0) return L;
    std::vector<std::vector<int>> children(n);
    for (int i = 1; i < n; ++i)
        if (nodes[i].parent >= 0 && nodes[i].parent < n) children[nodes[i].parent].push_back(i);
    for (auto& c : children)
        std::stable_sort(c.begin(), c.end(), [&](int a, int b) { return nodes[a].rank < nodes[b].rank; });
    std::function<void(int)> place = [&](int i) {
        L.rows = std::max(L.rows, nodes[i].depth + 1);
        if (children[i].empty()) {
            L.column[i] = float(L.columns++);
            return;
        }
        for (int c : children[i]) place(c);
        L.column[i] = 0.5f * (L.column[children[i].front()] + L.column[children[i].back()]);
    };
    place(0);
    return L;
}

}  // namespace medusa::chat
