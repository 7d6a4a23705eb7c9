#include "decoding/trained_files.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "model/json_file.h"

namespace medusa {

namespace {

// How deep a layer's greedy chains were accepted on held-out greedy text, per depth, from the
// accuracy.json its trainer wrote beside it (empty when there is none or it cannot be read).
std::vector<double> chain_accepted(const std::string& folder) {
    try {
        const nlohmann::json j = read_json_file(folder + "/accuracy.json");
        const nlohmann::json* greedy = nullptr;
        if (j.contains("draft_on_greedy_text")) greedy = &j["draft_on_greedy_text"];  // EAGLE-3's report
        else if (j.contains("trained") && j["trained"].contains("draft_on_greedy_text"))
            greedy = &j["trained"]["draft_on_greedy_text"];  // EAGLE-2's
        if (greedy && greedy->contains("chain_accepted")) return (*greedy)["chain_accepted"].get<std::vector<double>>();
    } catch (const std::exception&) {
    }
    return {};
}

double sum_first(const std::vector<double>& v, size_t n) {
    double s = 0;
    for (size_t i = 0; i < std::min(n, v.size()); ++i) s += v[i];
    return s;
}

}  // namespace

std::string default_cache_dir() {
    if (const char* c = std::getenv("MEDUSA_CACHE"); c && *c) return c;
    if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/medusa-vk";
    return "";
}

TrainedDefaults find_trained_defaults(const std::string& cache_dir, const std::string& model_name) {
    namespace fs = std::filesystem;
    TrainedDefaults d;
    if (cache_dir.empty()) return d;
    d.cache_dir = cache_dir + "/" + model_name;
    std::error_code ec;
    if (fs::is_regular_file(d.cache_dir + "/heads/medusa_lm_head.safetensors", ec)) d.heads_path = d.cache_dir + "/heads";
    if (fs::is_regular_file(d.cache_dir + "/tree.json", ec)) d.tree_path = d.cache_dir + "/tree.json";
    // The EAGLE layer whose held-out greedy chains went deeper, over the depths both reports have
    // (EAGLE-3 where only it has a report or neither has: it drafts deeper chains where the
    // model's last layer matters less).
    const std::string e3 = d.cache_dir + "/eagle3", e2 = d.cache_dir + "/eagle";
    const bool has3 = fs::is_regular_file(e3 + "/model.safetensors", ec), has2 = fs::is_regular_file(e2 + "/model.safetensors", ec);
    if (has3 && has2) {
        const std::vector<double> a3 = chain_accepted(e3), a2 = chain_accepted(e2);
        const size_t depth = std::min(a3.size(), a2.size());
        d.eagle_path = !a2.empty() && (a3.empty() || sum_first(a2, depth) > sum_first(a3, depth)) ? e2 : e3;
    } else if (has3 || has2) {
        d.eagle_path = has3 ? e3 : e2;
    }
    return d;
}

}  // namespace medusa
