// Medusa candidate trees: `medusa_choices` (paths of top-k ranks, one rank per head) and the
// buffers the verify step needs, laid out exactly as the reference implementation builds them.
#pragma once
#include <string>
#include <vector>

namespace medusa {

struct MedusaTree {
    std::vector<std::vector<int>> choices;  // sorted by (length, path), as Medusa sorts them
    std::string name;
};

struct TreeBuffers {
    int num_nodes = 1;  // root included
    int max_depth = 0;  // deepest node's depth; the root is depth 0
    int topk = 10;
    std::vector<int> tree_indices;  // node -> index into [root, head0 top-k.., head1 top-k.., ..]
    std::vector<int> position_ids;  // node -> depth
    std::vector<std::vector<int>> retrieve_indices;  // candidate paths of node indices, -1 padded
    std::vector<std::vector<int>> attn_mask;         // node sees itself and its ancestors
    std::vector<int> parent, depth, rank;            // per node; the root has parent -1
};

constexpr int kMaxTreeNodes = 128;
constexpr int kMaxTreeDepth = 7;

// Validates and sorts; throws std::invalid_argument naming the offending path and the rule.
MedusaTree make_tree(std::vector<std::vector<int>> choices, int topk = 10, const std::string& name = "");
MedusaTree parse_tree_json(const std::string& json_text, const std::string& source, int topk = 10);
// Every node at depth d has widths[d] children, of ranks 0..widths[d]-1.
MedusaTree dense_tree(const std::vector<int>& widths);
// A preset name (mc_sim_7b_63, ...), a JSON file, "dense:W1,W2,..", "chain:N", or "1"/"ar" (root only).
MedusaTree load_tree(const std::string& spec);
std::vector<std::string> tree_preset_names();

TreeBuffers build_tree_buffers(const MedusaTree& tree, int topk = 10);
// The layout of the reference vectors: tree_indices, position_ids, retrieve_indices, attn_mask.
std::string tree_buffers_json(const TreeBuffers& b);

}  // namespace medusa
