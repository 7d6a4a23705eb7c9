#include "decode/tree.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

namespace medusa {

const std::map<std::string, std::string>& tree_presets();

namespace {

std::string path_text(const std::vector<int>& p) {
    std::string s = "[";
    for (size_t i = 0; i < p.size(); ++i) s += (i ? ", " : "") + std::to_string(p[i]);
    return s + "]";
}

bool shorter_then_lexical(const std::vector<int>& a, const std::vector<int>& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
}

}  // namespace

MedusaTree make_tree(std::vector<std::vector<int>> choices, int topk, const std::string& name) {
    std::sort(choices.begin(), choices.end(), shorter_then_lexical);
    if (int(choices.size()) + 1 > kMaxTreeNodes)
        throw std::invalid_argument("tree has " + std::to_string(choices.size() + 1) + " nodes; at most " +
                                    std::to_string(kMaxTreeNodes) + " are supported");
    std::set<std::vector<int>> seen;
    for (const auto& p : choices) {
        if (p.empty()) throw std::invalid_argument("tree path [] is empty: the root is implicit");
        if (int(p.size()) > kMaxTreeDepth)
            throw std::invalid_argument("tree path " + path_text(p) + " is deeper than " +
                                        std::to_string(kMaxTreeDepth) + " levels");
        for (int r : p)
            if (r < 0 || r >= topk)
                throw std::invalid_argument("tree path " + path_text(p) + " uses rank " + std::to_string(r) +
                                            ", outside top-" + std::to_string(topk));
        if (!seen.insert(p).second) throw std::invalid_argument("tree path " + path_text(p) + " appears twice");
        if (p.size() > 1 && !seen.count(std::vector<int>(p.begin(), p.end() - 1)))
            throw std::invalid_argument("tree path " + path_text(p) + " has no parent path " +
                                        path_text(std::vector<int>(p.begin(), p.end() - 1)));
    }
    return {std::move(choices), name};
}

MedusaTree parse_tree_json(const std::string& text, const std::string& source, int topk) {
    std::vector<std::vector<int>> choices;
    try {
        auto j = nlohmann::json::parse(text);
        if (j.is_object() && j.contains("medusa_choices")) j = j["medusa_choices"];
        choices = j.get<std::vector<std::vector<int>>>();
    } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument(source + ": not a list of paths (medusa_choices): " + e.what());
    }
    try {
        return make_tree(std::move(choices), topk, source);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(source + ": " + e.what());
    }
}

MedusaTree dense_tree(const std::vector<int>& widths) {
    std::vector<std::vector<int>> level = {{}}, all;
    for (int w : widths) {
        if (w < 1) throw std::invalid_argument("dense tree widths must be at least 1");
        std::vector<std::vector<int>> next;
        for (const auto& p : level)
            for (int r = 0; r < w; ++r) {
                auto q = p;
                q.push_back(r);
                next.push_back(q);
                all.push_back(q);
            }
        level = std::move(next);
    }
    std::string name = "dense:";
    for (size_t i = 0; i < widths.size(); ++i) name += (i ? "," : "") + std::to_string(widths[i]);
    return make_tree(std::move(all), 10, name);
}

std::vector<std::string> tree_preset_names() {
    std::vector<std::string> v;
    for (const auto& [k, _] : tree_presets()) v.push_back(k);
    return v;
}

MedusaTree load_tree(const std::string& spec) {
    auto numbers = [&](const std::string& list) {
        std::vector<int> v;
        std::stringstream ss(list);
        std::string item;
        while (std::getline(ss, item, ',')) {
            try {
                v.push_back(std::stoi(item));
            } catch (const std::exception&) {
                throw std::invalid_argument("tree '" + spec + "': '" + item + "' is not a number");
            }
        }
        return v;
    };
    if (spec == "1" || spec == "ar") return {{}, "ar"};
    if (spec.rfind("dense:", 0) == 0) return dense_tree(numbers(spec.substr(6)));
    if (spec.rfind("chain:", 0) == 0) {
        const auto n = numbers(spec.substr(6));
        if (n.size() != 1 || n[0] < 0) throw std::invalid_argument("tree '" + spec + "': chain:N needs one length");
        std::vector<std::vector<int>> c;
        for (int d = 1; d <= n[0]; ++d) c.push_back(std::vector<int>(d, 0));
        return make_tree(std::move(c), 10, spec);
    }
    if (auto it = tree_presets().find(spec); it != tree_presets().end())
        return parse_tree_json(it->second, spec);
    if (std::filesystem::exists(spec)) {
        std::ifstream f(spec);
        std::stringstream ss;
        ss << f.rdbuf();
        return parse_tree_json(ss.str(), spec);
    }
    std::string known;
    for (const auto& n : tree_preset_names()) known += " " + n;
    throw std::invalid_argument("tree '" + spec + "' is neither a file nor a preset (" + known +
                                " ), dense:W1,W2,.., chain:N or 1");
}

TreeBuffers build_tree_buffers(const MedusaTree& tree, int topk) {
    const auto& c = tree.choices;
    const int n = int(c.size()) + 1;
    TreeBuffers b;
    b.num_nodes = n;
    b.topk = topk;
    std::map<std::vector<int>, int> index;  // path -> node index
    for (int i = 0; i < int(c.size()); ++i) index[c[i]] = i + 1;
    b.tree_indices.assign(n, 0);
    b.position_ids.assign(n, 0);
    b.parent.assign(n, -1);
    b.depth.assign(n, 0);
    b.rank.assign(n, 0);
    b.attn_mask.assign(n, std::vector<int>(n, 0));
    for (int i = 0; i < n; ++i) b.attn_mask[i][0] = b.attn_mask[i][i] = 1;
    for (int i = 1; i < n; ++i) {
        const auto& p = c[i - 1];
        const int d = int(p.size());
        b.tree_indices[i] = p.back() + topk * (d - 1) + 1;
        b.position_ids[i] = b.depth[i] = d;
        b.rank[i] = p.back();
        b.parent[i] = d == 1 ? 0 : index.at(std::vector<int>(p.begin(), p.end() - 1));
        for (int a = b.parent[i]; a > 0; a = b.parent[a]) b.attn_mask[i][a] = 1;
        b.max_depth = std::max(b.max_depth, d);
    }
    // Paths from the deepest-last choice backwards, skipping those already covered (as the reference does).
    std::set<std::vector<int>> covered;
    for (int i = int(c.size()) - 1; i >= 0; --i) {
        if (covered.count(c[i])) continue;
        std::vector<int> row = {0};
        for (size_t k = 1; k <= c[i].size(); ++k) {
            std::vector<int> prefix(c[i].begin(), c[i].begin() + k);
            row.push_back(index.at(prefix));
            covered.insert(prefix);
        }
        b.retrieve_indices.push_back(row);
    }
    if (b.retrieve_indices.empty()) b.retrieve_indices.push_back({0});
    for (auto& row : b.retrieve_indices) row.resize(b.max_depth + 1, -1);
    return b;
}

std::string tree_buffers_json(const TreeBuffers& b) {
    nlohmann::json j;
    j["tree_indices"] = b.tree_indices;
    j["position_ids"] = b.position_ids;
    j["retrieve_indices"] = b.retrieve_indices;
    j["attn_mask"] = b.attn_mask;
    return j.dump();
}

}  // namespace medusa
