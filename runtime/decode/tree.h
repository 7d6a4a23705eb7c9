// Medusa candidate trees: `medusa_choices` (paths of top-k ranks, one rank per head) and the
// buffers the verify step needs, laid out exactly as the reference generate_medusa_buffers builds them.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace medusa {

// The GPU verify step holds at most 128 nodes and paths of at most 8 tokens (root + 7 heads).
constexpr int kMaxTreeNodes = 128;
constexpr int kMaxTreeDepth = 7;

struct TreeLimits {
    int topk = 10;                  // every rank must be below this (the reference's TOPK)
    int max_nodes = kMaxTreeNodes;  // root included
    int max_depth = kMaxTreeDepth;  // one Medusa head per level
};

struct MedusaTree {
    std::vector<std::vector<int>> choices;  // sorted by (length, path), as Medusa sorts them
    std::string name;
    int num_nodes() const { return int(choices.size()) + 1; }
    int max_depth() const;
};

struct TreeBuffers {
    int num_nodes = 1;  // root included
    int max_depth = 0;  // deepest node's depth; the root is depth 0
    int topk = 10;
    std::vector<int> tree_indices;  // node -> index into [root, head0 top-k.., head1 top-k.., ..]
    std::vector<int> position_ids;  // node -> depth
    std::vector<std::vector<int>> retrieve_indices;  // leaf paths of node indices, rows -1 padded
    std::vector<std::vector<int>> attn_mask;         // node sees itself and its ancestors
    std::vector<int> parent, depth, rank;            // per node; the root has parent -1, rank 0
};

// Sorts and validates; throws std::invalid_argument naming the offending path and the rule.
MedusaTree make_tree(std::vector<std::vector<int>> choices, const std::string& name = "", TreeLimits limits = {});
// A JSON list of paths, or an object holding one under "medusa_choices" or "choices".
MedusaTree parse_tree_json(const std::string& json_text, const std::string& source, TreeLimits limits = {});
MedusaTree read_tree_file(const std::string& path, TreeLimits limits = {});
// Every node at depth d has widths[d] children, of ranks 0..widths[d]-1.
MedusaTree dense_tree(const std::vector<int>& widths, TreeLimits limits = {});
// One path of rank 0 of the given length (0: the root alone, i.e. plain decoding).
MedusaTree chain_tree(int length, TreeLimits limits = {});
// A preset name (mc_sim_7b_63, ...), a JSON file, "dense:W1,W2,..", "chain:N", or "1"/"ar" (root only).
MedusaTree load_tree(const std::string& spec, TreeLimits limits = {});

// Presets compiled into the binary (tree_presets.cpp): name -> JSON list of paths.
const std::map<std::string, std::string>& tree_presets();
std::vector<std::string> tree_preset_names();

// Re-sorts and re-validates `tree` against `topk`, so a hand-built tree gets the reference layout.
TreeBuffers build_tree_buffers(const MedusaTree& tree, int topk = 10);
// The layout of the reference vectors: tree_indices, position_ids, retrieve_indices, attn_mask,
// one matrix row per line.
std::string tree_buffers_json(const TreeBuffers& b);

}  // namespace medusa
