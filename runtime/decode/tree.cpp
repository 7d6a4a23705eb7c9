#include "decode/tree.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

#include "model/file_bytes.h"
#include "model/json_file.h"

namespace medusa {
namespace {

using Path = std::vector<int>;

std::string path_text(const Path& p) {
    std::string s = "[";
    for (size_t i = 0; i < p.size(); ++i) {
        if (i) s += ", ";
        s += std::to_string(p[i]);
    }
    return s + "]";
}

// Medusa's sort key: (len(path), path).
bool shorter_then_lexical(const Path& a, const Path& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
}

Path parent_of(const Path& p) { return Path(p.begin(), p.end() - 1); }

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument(what); }

// "2,3,2" -> {2, 3, 2}; every item must be a whole non-negative number.
std::vector<int> parse_numbers(const std::string& spec, const std::string& list) {
    std::vector<int> v;
    std::stringstream ss(list);
    std::string item;
    while (std::getline(ss, item, ',')) {
        int x = -1;
        auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), x);
        if (ec != std::errc() || end != item.data() + item.size() || x < 0)
            bad("tree '" + spec + "': '" + item + "' is not a non-negative number");
        v.push_back(x);
    }
    if (v.empty() || (!list.empty() && list.back() == ',')) bad("tree '" + spec + "': expected numbers after ':'");
    return v;
}

// One JSON array per line for vectors, one row per line for matrices: small and diffable.
void write_row(std::ostringstream& o, const std::vector<int>& row) {
    o << '[';
    for (size_t i = 0; i < row.size(); ++i) o << (i ? ", " : "") << row[i];
    o << ']';
}

void write_matrix(std::ostringstream& o, const std::vector<std::vector<int>>& m) {
    o << "[\n";
    for (size_t r = 0; r < m.size(); ++r) {
        o << "    ";
        write_row(o, m[r]);
        o << (r + 1 < m.size() ? ",\n" : "\n");
    }
    o << "  ]";
}

}  // namespace

int MedusaTree::max_depth() const {
    size_t d = 0;
    for (const auto& p : choices) d = std::max(d, p.size());
    return int(d);
}

MedusaTree make_tree(std::vector<Path> choices, const std::string& name, TreeLimits limits) {
    if (limits.topk < 1) bad("tree top-k must be at least 1");
    std::sort(choices.begin(), choices.end(), shorter_then_lexical);
    if (int64_t(choices.size()) + 1 > limits.max_nodes)
        bad("tree has " + std::to_string(choices.size() + 1) + " nodes (root included); at most " +
            std::to_string(limits.max_nodes) + " are allowed");
    std::set<Path> seen;
    for (const auto& p : choices) {
        const std::string at = "tree path " + path_text(p);
        if (p.empty()) bad("tree path [] is empty: the root is implicit and must not be listed");
        for (int r : p)
            if (r < 0 || r >= limits.topk)
                bad(at + " uses rank " + std::to_string(r) + ": ranks must be in 0.." +
                    std::to_string(limits.topk - 1) + " (top-" + std::to_string(limits.topk) + ")");
        if (int(p.size()) > limits.max_depth)
            bad(at + " is " + std::to_string(p.size()) + " levels deep; at most " + std::to_string(limits.max_depth) +
                " are allowed (one Medusa head per level)");
        if (!seen.insert(p).second) bad(at + " is listed twice");
        // Sorted by length, so a parent, if listed, is already in `seen`.
        if (p.size() > 1 && !seen.count(parent_of(p)))
            bad(at + " has no parent: " + path_text(parent_of(p)) + " must be listed too");
    }
    return {std::move(choices), name};
}

MedusaTree parse_tree_json(const std::string& text, const std::string& source, TreeLimits limits) {
    nlohmann::json j;
    try {
        j = parse_json_text(text, source);  // refuses deep nesting before anything recurses
    } catch (const FormatError& e) {
        bad(e.what());
    }
    if (j.is_object()) {
        if (j.contains("medusa_choices")) j = j["medusa_choices"];
        else if (j.contains("choices")) j = j["choices"];
    }
    if (!j.is_array()) bad(source + ": expected a list of paths such as [[0], [0, 0], [1]]");
    std::vector<Path> choices;
    for (const auto& item : j) {
        if (!item.is_array()) bad(source + ": every path must be a list of ranks, got " + json_excerpt(item));
        Path p;
        for (const auto& r : item) {
            // Reject 1.5 or "1": nlohmann would silently convert some of them.
            if (!r.is_number_integer()) bad(source + ": path " + json_excerpt(item) + " holds a rank that is not an integer");
            const int64_t v = r.is_number_unsigned() ? int64_t(std::min<uint64_t>(r.get<uint64_t>(), INT_MAX))
                                                     : r.get<int64_t>();
            p.push_back(int(std::clamp<int64_t>(v, INT_MIN, INT_MAX)));
        }
        choices.push_back(std::move(p));
    }
    try {
        return make_tree(std::move(choices), source, limits);
    } catch (const std::invalid_argument& e) {
        bad(source + ": " + e.what());
    }
}

namespace {
constexpr uint64_t kMaxTreeFileBytes = uint64_t(1) << 20;
}  // namespace

MedusaTree read_tree_file(const std::string& path, TreeLimits limits) {
    std::string text;
    try {
        // A tree of the 128 nodes allowed, with tune-tree's budgets beside it, is tens of KB; parsed,
        // JSON takes some 35 times its text, so a file of 64 MB would take gigabytes before the
        // node limit could refuse it.
        text = read_text_file(path, kMaxTreeFileBytes);
    } catch (const FormatError& e) {
        bad(e.what());
    }
    return parse_tree_json(text, path, limits);
}

MedusaTree dense_tree(const std::vector<int>& widths, TreeLimits limits) {
    std::string name = "dense:";
    for (size_t i = 0; i < widths.size(); ++i) {
        if (i) name += ',';
        name += std::to_string(widths[i]);
    }
    // Check sizes before expanding, so dense:10,10,10,10 fails fast instead of building 11110 paths.
    int64_t level = 1, total = 1;
    for (int w : widths) {
        if (w < 1 || w > limits.topk)
            bad("tree '" + name + "': widths must be in 1.." + std::to_string(limits.topk) + " (top-" +
                std::to_string(limits.topk) + "), got " + std::to_string(w));
        level *= w;
        total += level;
        if (total > limits.max_nodes)
            bad("tree '" + name + "' would have more than " + std::to_string(limits.max_nodes) + " nodes");
    }
    std::vector<Path> frontier = {{}}, all;
    for (int w : widths) {
        std::vector<Path> next;
        for (const auto& p : frontier)
            for (int r = 0; r < w; ++r) {
                Path q = p;
                q.push_back(r);
                next.push_back(q);
                all.push_back(std::move(q));
            }
        frontier = std::move(next);
    }
    return make_tree(std::move(all), name, limits);
}

MedusaTree chain_tree(int length, TreeLimits limits) {
    if (length < 0) bad("chain length must be non-negative");
    if (length > limits.max_depth) bad("chain:" + std::to_string(length) + " is deeper than " +
                                       std::to_string(limits.max_depth) + " levels");
    std::vector<Path> c;
    for (int d = 1; d <= length; ++d) c.push_back(Path(d, 0));
    return make_tree(std::move(c), "chain:" + std::to_string(length), limits);
}

std::vector<std::string> tree_preset_names() {
    std::vector<std::string> v;
    for (const auto& [k, _] : tree_presets()) v.push_back(k);
    return v;
}

MedusaTree load_tree(const std::string& spec, TreeLimits limits) {
    if (spec == "1" || spec == "ar") return make_tree({}, "ar", limits);
    if (spec.rfind("dense:", 0) == 0) return dense_tree(parse_numbers(spec, spec.substr(6)), limits);
    if (spec.rfind("chain:", 0) == 0) {
        const auto n = parse_numbers(spec, spec.substr(6));
        if (n.size() != 1) bad("tree '" + spec + "': chain:N takes one length");
        return chain_tree(n[0], limits);
    }
    if (auto it = tree_presets().find(spec); it != tree_presets().end())
        return parse_tree_json(it->second, spec, limits);
    std::error_code ec;
    // Anything that exists is read as a file, so a FIFO or a folder is named as such.
    if (std::filesystem::exists(spec, ec)) return read_tree_file(spec, limits);
    std::string known;
    for (const auto& n : tree_preset_names()) known += " " + n;
    bad("tree '" + spec + "' is neither a file nor a preset (" + known + " ), dense:W1,W2,.., chain:N or ar");
}

TreeBuffers build_tree_buffers(const MedusaTree& input, int topk) {
    // No size limits here: the caller chose them when it made the tree; the rest must hold.
    const MedusaTree tree = make_tree(input.choices, input.name, {topk, INT_MAX, INT_MAX});
    const auto& c = tree.choices;
    const int n = tree.num_nodes();
    TreeBuffers b;
    b.num_nodes = n;
    b.topk = topk;
    b.max_depth = tree.max_depth();
    std::map<Path, int> index;  // path -> node index (its sorted position + 1)
    for (int i = 0; i < int(c.size()); ++i) index[c[i]] = i + 1;
    b.tree_indices.assign(n, 0);
    b.position_ids.assign(n, 0);
    b.parent.assign(n, -1);
    b.depth.assign(n, 0);
    b.rank.assign(n, 0);
    b.attn_mask.assign(n, std::vector<int>(n, 0));
    std::vector<bool> has_child(n, false);
    b.attn_mask[0][0] = 1;
    for (int i = 1; i < n; ++i) {
        const Path& p = c[i - 1];
        const int d = int(p.size());
        // Candidates are laid out [root, head0's top-k, head1's top-k, ...]; a depth-d node is head d-1's.
        b.tree_indices[i] = 1 + (d - 1) * topk + p.back();
        b.position_ids[i] = b.depth[i] = d;
        b.rank[i] = p.back();
        b.parent[i] = d == 1 ? 0 : index.at(parent_of(p));
        has_child[b.parent[i]] = true;
        for (int a = i; a >= 0; a = b.parent[a]) b.attn_mask[i][a] = 1;
    }
    // The reference walks the sorted paths backwards and keeps those not yet covered as a prefix:
    // exactly the leaves, in reverse sorted order. Rows are root + path, padded with -1.
    for (int i = n - 1; i >= 1; --i) {
        if (has_child[i]) continue;
        std::vector<int> row(b.max_depth + 1, -1);
        for (int a = i; a >= 0; a = b.parent[a]) row[b.depth[a]] = a;
        b.retrieve_indices.push_back(std::move(row));
    }
    if (n == 1) b.retrieve_indices.push_back({0});  // the reference cannot build this; one path: the root
    return b;
}

std::string tree_buffers_json(const TreeBuffers& b) {
    std::ostringstream o;
    o << "{\n  \"tree_indices\": ";
    write_row(o, b.tree_indices);
    o << ",\n  \"position_ids\": ";
    write_row(o, b.position_ids);
    o << ",\n  \"retrieve_indices\": ";
    write_matrix(o, b.retrieve_indices);
    o << ",\n  \"attn_mask\": ";
    write_matrix(o, b.attn_mask);
    o << "\n}\n";
    return o.str();
}

}  // namespace medusa
