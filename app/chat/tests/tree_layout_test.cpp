#include <catch2/catch.hpp>

#include "decode/tree.h"
#include "tree_layout.h"

using namespace medusa;
using namespace medusa::chat;

namespace {
std::vector<TreeNodeTrace> nodes_of(const TreeBuffers& b) {
    std::vector<TreeNodeTrace> n(b.num_nodes);
    for (int i = 0; i < b.num_nodes; ++i) n[i].parent = b.parent[i], n[i].depth = b.depth[i], n[i].rank = b.rank[i];
    return n;
}
}  // namespace

TEST_CASE("tree layout: leaves get their own columns, ranks left to right, parents centred", "[chat]") {
    const TreeBuffers b = build_tree_buffers(load_tree("mc_sim_7b_63"));
    const auto nodes = nodes_of(b);
    const TreeLayout L = layout_tree(nodes);
    CHECK(L.rows == b.max_depth + 1);
    CHECK(L.columns == 42);  // mc_sim_7b_63 has 42 leaves
    for (int i = 1; i < b.num_nodes; ++i)
        for (int j = 1; j < b.num_nodes; ++j)
            if (nodes[i].parent == nodes[j].parent && nodes[i].rank < nodes[j].rank)
                REQUIRE(L.column[i] < L.column[j]);
}

TEST_CASE("tree layout of a single node (plain decoding)", "[chat]") {
    std::vector<TreeNodeTrace> one(1);
    const TreeLayout L = layout_tree(one);
    CHECK(L.columns == 1);
    CHECK(L.rows == 1);
}

TEST_CASE("accepted view: the path and every guess under it, rejected subtrees folded, at most top-k wide",
          "[chat]") {
    const TreeBuffers b = build_tree_buffers(load_tree("mc_sim_7b_63"));
    auto nodes = nodes_of(b);
    // Accept the rank-0 chain two deep: root -> [0] -> [0, 0].
    int a1 = -1, a2 = -1;
    for (int i = 1; i < b.num_nodes; ++i) {
        if (nodes[i].parent == 0 && nodes[i].rank == 0) a1 = i;
    }
    for (int i = 1; i < b.num_nodes; ++i)
        if (nodes[i].parent == a1 && nodes[i].rank == 0) a2 = i;
    REQUIRE(a1 > 0);
    REQUIRE(a2 > 0);
    nodes[a1].accepted = nodes[a2].accepted = true;
    const TreeLayout L = layout_accepted_view(nodes);
    int drawn = 0, folded = 0;
    for (int i = 0; i < b.num_nodes; ++i) {
        const int p = nodes[i].parent;
        const bool under_path = i == 0 || p == 0 || p == a1 || p == a2;
        CHECK(bool(L.visible[i]) == under_path);
        if (L.visible[i]) ++drawn, folded += L.hidden[i];
    }
    CHECK(drawn + folded == b.num_nodes);  // every node is drawn or counted in a fold
    CHECK(L.columns <= 10);                // the widest sibling group, not the leaf count (42)
    CHECK(L.rows == 4);                    // root, the two accepted levels, the guesses after them
    // Siblings keep rank order left to right and never share a column.
    for (int i = 1; i < b.num_nodes; ++i)
        for (int j = 1; j < b.num_nodes; ++j)
            if (L.visible[i] && L.visible[j] && i != j && nodes[i].parent == nodes[j].parent) {
                CHECK(L.column[i] != L.column[j]);
                if (nodes[i].rank < nodes[j].rank) CHECK(L.column[i] < L.column[j]);
            }
}
