#include "decode/medusa_drafter.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace medusa {

MedusaDrafter::MedusaDrafter(TreeRunner& runner, const ModelFile& file, const MedusaHeads& heads,
                             const TreeBuffers& tree)
    : tree_(tree) {
    const int n = tree.num_nodes, depth = tree.max_depth;
    if (n < 1 || n > TokenBlock::kMaxTokens)
        throw std::invalid_argument("trees must have 1 to " + std::to_string(TokenBlock::kMaxTokens) + " nodes");
    if (n > 1 && heads.count() < depth)
        throw std::invalid_argument((heads.untrained() ? std::string("--heads init") : heads.source) +
                                    ": the tree is " + std::to_string(depth) + " levels deep but only " +
                                    std::to_string(heads.count()) + " Medusa heads are loaded (one a level)");
    // The heads' candidates are packed at stride topk (the tree's largest rank + 1), so a node
    // is indexed by its depth and rank rather than by the buffers' nominal top-k.
    int topk = 1;
    for (int i = 1; i < n; ++i) topk = std::max(topk, tree.rank[i] + 1);
    if (topk > 32) throw std::invalid_argument("tree ranks must be below 32");
    shape_ = CandidateTree::root_only(0);
    std::vector<int> candidate = {0};
    for (int i = 1; i < n; ++i) {
        shape_.add(tree.parent[i], 0, 1.0f);
        candidate.push_back(1 + (tree.depth[i] - 1) * topk + tree.rank[i]);
    }
    shape_.device_tokens = true;
    if (n > 1) {
        stage_ = runner.medusa_stage(file, heads, depth, topk, candidate);
        runner.prepare(n, stage_.get());  // the whole tree's step, built while loading
    }
}

std::vector<PreparedBlock> MedusaDrafter::blocks_to_prepare() const {
    if (!stage_) return {};
    return {{shape_.size(), stage_.get()}};
}

CandidateTree MedusaDrafter::propose(const DraftContext& c) {
    const int root = c.sequence.back();
    if (!has_hidden_ || !stage_) return CandidateTree::root_only(root);
    // Nodes are sorted by depth, so the nodes that fit the room and the depth are a prefix.
    int n = 0;
    while (n < shape_.size() && n < c.max_nodes && shape_.depth[n] <= c.max_depth) ++n;
    if (n <= 1) return CandidateTree::root_only(root);
    CandidateTree t = shape_.prefix(n);
    t.token[0] = root;
    return t;
}

}  // namespace medusa
