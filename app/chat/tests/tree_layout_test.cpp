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
