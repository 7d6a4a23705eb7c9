#include "tree_layout.h"

#include <algorithm>
#include <functional>

namespace medusa::chat {

namespace {

std::vector<std::vector<int>> children_by_rank(const std::vector<TreeNodeTrace>& nodes) {
    const int n = int(nodes.size());
    std::vector<std::vector<int>> children(n);
    for (int i = 1; i < n; ++i)
        if (nodes[i].parent >= 0 && nodes[i].parent < i) children[nodes[i].parent].push_back(i);
    for (auto& c : children)
        std::stable_sort(c.begin(), c.end(), [&](int a, int b) { return nodes[a].rank < nodes[b].rank; });
    return children;
}

}  // namespace

TreeLayout layout_tree(const std::vector<TreeNodeTrace>& nodes) {
    TreeLayout L;
    const int n = int(nodes.size());
    L.column.assign(n, 0.0f);
    L.visible.assign(n, 1);
    L.hidden.assign(n, 0);
    if (n == 0) return L;
    const auto children = children_by_rank(nodes);
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

TreeLayout layout_accepted_view(const std::vector<TreeNodeTrace>& nodes) {
    TreeLayout L;
    const int n = int(nodes.size());
    L.column.assign(n, 0.0f);
    L.visible.assign(n, 0);
    L.hidden.assign(n, 0);
    if (n == 0) return L;
    const auto children = children_by_rank(nodes);
    auto on_path = [&](int i) { return i == 0 || nodes[i].accepted; };
    // Subtree sizes (children have larger indices than their parents).
    std::vector<int> size(n, 1);
    for (int i = n - 1; i >= 1; --i)
        if (nodes[i].parent >= 0 && nodes[i].parent < i) size[nodes[i].parent] += size[i];
    L.visible[0] = 1;
    L.rows = 1;
    for (int i = 0; i < n; ++i)
        if (on_path(i) && L.visible[i]) {
            L.columns = std::max(L.columns, int(children[i].size()));
            for (int c : children[i]) {
                L.visible[c] = 1;
                L.rows = std::max(L.rows, nodes[c].depth + 1);
                if (!on_path(c)) L.hidden[c] = size[c] - 1;
            }
        }
    L.columns = std::max(L.columns, 1);
    // Each group of siblings centred under its parent as far as the width allows.
    for (int i = 0; i < n; ++i) {
        if (!L.visible[i] || !on_path(i) || children[i].empty()) continue;
        const int k = int(children[i].size());
        const float start = std::clamp(L.column[i] - 0.5f * float(k - 1), 0.0f, float(L.columns - k));
        for (int j = 0; j < k; ++j) L.column[children[i][j]] = start + float(j);
    }
    return L;
}

}  // namespace medusa::chat
