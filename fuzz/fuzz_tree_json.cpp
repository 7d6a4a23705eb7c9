// libFuzzer target: Medusa tree files (a JSON list of rank paths, or an object holding one under
// "medusa_choices" or "choices") and dense:/chain: tree specs. A tree that loads must keep its
// limits, survive a round trip through JSON, and give verify buffers that describe one tree.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>

#include "fuzz_support.h"
#include "decode/tree.h"

namespace {

using medusa::fuzz::check;

void check_tree(const medusa::MedusaTree& tree) {
    const medusa::TreeLimits limits;
    check(tree.num_nodes() <= limits.max_nodes && tree.max_depth() <= limits.max_depth);
    for (const auto& path : tree.choices) {
        check(!path.empty());
        for (int r : path) check(r >= 0 && r < limits.topk);
    }
    // Written back as the list it was read from, the tree reads the same.
    check(medusa::parse_tree_json(nlohmann::json(tree.choices).dump(), "round trip").choices == tree.choices);

    const medusa::TreeBuffers b = medusa::build_tree_buffers(tree, limits.topk);
    const int n = tree.num_nodes();
    check(b.num_nodes == n && b.max_depth == tree.max_depth() && int(b.attn_mask.size()) == n);
    check(b.parent[0] == -1 && b.depth[0] == 0 && b.tree_indices[0] == 0);
    int leaves = 0;
    for (int i = 1; i < n; ++i) {
        const int p = b.parent[i];
        check(p >= 0 && p < i && b.depth[i] == b.depth[p] + 1 && b.position_ids[i] == b.depth[i]);
        check(b.tree_indices[i] == 1 + (b.depth[i] - 1) * limits.topk + b.rank[i]);
        int seen = 0;  // a node attends to itself and its ancestors only
        for (int j = 0; j < n; ++j) seen += b.attn_mask[i][j];
        check(seen == b.depth[i] + 1);
        bool has_child = false;
        for (int j = i + 1; j < n && !has_child; ++j) has_child = b.parent[j] == i;
        leaves += !has_child;
    }
    check(int(b.retrieve_indices.size()) == (n == 1 ? 1 : leaves));
    for (const auto& row : b.retrieve_indices) check(int(row.size()) == b.max_depth + 1 && row[0] == 0);
    const auto back = nlohmann::json::parse(medusa::tree_buffers_json(b));
    check(back["tree_indices"].get<std::vector<int>>() == b.tree_indices);
}

// Checks the tree `load` gives unless it refuses the input with std::invalid_argument; anything
// thrown while checking a loaded tree escapes to libFuzzer, which reports it as a crash.
template <class Load>
void try_tree(Load load) {
    std::optional<medusa::MedusaTree> tree;
    try {
        tree = load();
    } catch (const std::invalid_argument&) {
        return;
    }
    check_tree(*tree);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try_tree([&] { return medusa::parse_tree_json(text, "tree.json"); });
    // Specs that name no file: load_tree would read any other string that is an existing path.
    if (text.rfind("dense:", 0) == 0 || text.rfind("chain:", 0) == 0) try_tree([&] { return medusa::load_tree(text); });
    return 0;
}
