#include "decode/candidate_tree.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace medusa {

CandidateTree CandidateTree::root_only(int root) {
    CandidateTree t;
    t.token = {root};
    t.parent = {-1};
    t.depth = {0};
    t.rank = {0};
    t.q = {1.0f};
    t.child_q = {{}};
    return t;
}

int CandidateTree::max_depth() const { return depth.empty() ? 0 : *std::max_element(depth.begin(), depth.end()); }

int CandidateTree::add(int p, int tok, float prob) {
    if (p < 0 || p >= size()) throw std::invalid_argument("a candidate's parent must already be in the tree");
    int r = 0;
    for (int i = p + 1; i < size(); ++i) r += parent[i] == p;
    token.push_back(tok);
    parent.push_back(p);
    depth.push_back(depth[p] + 1);
    rank.push_back(r);
    q.push_back(prob);
    child_q.emplace_back();
    return size() - 1;
}

std::vector<std::vector<int>> CandidateTree::children() const {
    std::vector<std::vector<int>> c(size());
    for (int i = 1; i < size(); ++i) c[parent[i]].push_back(i);
    return c;
}

std::vector<int> CandidateTree::path_to(int node) const {
    std::vector<int> p;
    for (int a = node; a >= 0; a = parent[a]) p.push_back(a);
    std::reverse(p.begin(), p.end());
    return p;
}

CandidateTree CandidateTree::prefix(int n) const {
    n = std::clamp(n, 1, size());
    CandidateTree t = *this;
    for (auto* v : {&t.token, &t.parent, &t.depth, &t.rank}) v->resize(n);
    t.q.resize(n);
    t.child_q.resize(n);
    return t;
}

CandidateTree CandidateTree::keep(const std::vector<int>& nodes) const {
    if (nodes.empty() || nodes[0] != 0) throw std::invalid_argument("a kept subtree starts at the root");
    bool is_prefix = true;
    for (size_t i = 0; i < nodes.size(); ++i) is_prefix = is_prefix && nodes[i] == int(i);
    if (is_prefix) return prefix(int(nodes.size()));
    if (device_tokens) throw std::invalid_argument("a device-drafted tree can only be cut to a prefix");
    CandidateTree t = root_only(token[0]);
    t.child_q[0] = child_q[0];
    std::vector<int> index(size(), -1);
    index[0] = 0;
    for (size_t i = 1; i < nodes.size(); ++i) {
        const int n = nodes[i];
        if (n <= nodes[i - 1] || n >= size() || index[size_t(parent[n])] < 0)
            throw std::invalid_argument("a kept subtree needs increasing nodes, each after its parent");
        index[n] = t.add(index[parent[n]], token[n], q[n]);
        t.child_q.back() = child_q[n];
    }
    return t;
}

TokenBlock CandidateTree::block(int base) const {
    TokenBlock b;
    b.base = base;
    b.tokens = token;
    const int n = size();
    b.positions.resize(n);
    b.mask.assign(n, std::vector<uint8_t>(n, 0));
    for (int i = 0; i < n; ++i) {
        b.positions[i] = base + depth[i];
        for (int a = i; a >= 0; a = parent[a]) b.mask[i][a] = 1;
    }
    return b;
}

void CandidateTree::validate(int vocab) const {
    const int n = size();
    if (n < 1) throw std::invalid_argument("a candidate tree needs its root");
    if (int(parent.size()) != n || int(depth.size()) != n || int(rank.size()) != n || int(q.size()) != n ||
        int(child_q.size()) != n)
        throw std::invalid_argument("a candidate tree's parts have different sizes");
    if (parent[0] != -1 || depth[0] != 0) throw std::invalid_argument("a candidate tree's root has a parent");
    for (int i = 0; i < n; ++i) {
        if (i > 0 && (parent[i] < 0 || parent[i] >= i))
            throw std::invalid_argument("candidate " + std::to_string(i) + " comes before its parent");
        if (i > 0 && depth[i] != depth[parent[i]] + 1)
            throw std::invalid_argument("candidate " + std::to_string(i) + " has the wrong depth");
        if (!device_tokens && (token[i] < 0 || token[i] >= vocab))
            throw std::invalid_argument("candidate token " + std::to_string(token[i]) + " outside the vocabulary");
        if (!child_q[i].empty() && int(child_q[i].size()) != vocab)
            throw std::invalid_argument("a draft distribution over another vocabulary");
    }
}

}  // namespace medusa
