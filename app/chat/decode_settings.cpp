#include "decode_settings.h"

#include <cstdlib>
#include <filesystem>

namespace medusa::chat {

namespace {

std::string file_stem(const std::string& path) {
    return std::filesystem::path(path).stem().string();
}

std::string short_float(float v) { return std::to_string(v).substr(0, 4); }

}  // namespace

std::string DecodeSettings::decoder_key() const {
    std::string k = model_path + "|" + tokenizer_path + "|" + std::to_string(int(mode)) + "|" +
                    std::to_string(temperature) + "|" + std::to_string(max_new_tokens) + "|" + accept_rule_name(rule) +
                    "|" + std::to_string(typical_eps) + "|" + std::to_string(typical_delta) + "|" +
                    std::to_string(top_k) + "|" + std::to_string(top_p) + "|" + std::to_string(repeat_penalty) + "|" +
                    std::to_string(ctx_size) + "|";
    if (mode == DecodeMode::Draft)
        return k + draft_path + "|" + std::to_string(gamma) + "|" + (adaptive_gamma ? "a" : "f") + "|" +
               std::to_string(draft_branches);
    if (mode == DecodeMode::Ngram) return k + std::to_string(ngram_tokens);
    if (mode == DecodeMode::Eagle)
        return k + eagle_path + "|" + eagle_tree + "|" + std::to_string(eagle_top_k) + "|" + std::to_string(eagle_depth) +
               "|" + std::to_string(eagle_nodes);
    return k + heads_path + "|" + tree + "|" + std::to_string(num_heads);
}

std::string DecodeSettings::mode_name() const {
    std::string r = accept_rule_name(rule);
    if (rule != AcceptRule::Greedy) r += " T=" + short_float(temperature);
    if (mode == DecodeMode::Plain) return rule == AcceptRule::Greedy ? "plain decoding" : "plain decoding (" + r + ")";
    if (mode == DecodeMode::Draft)
        return "draft (" + file_stem(draft_path) + ", gamma " + std::to_string(gamma) +
               (adaptive_gamma ? " adaptive" : "") +
               (draft_branches > 1 ? ", " + std::to_string(draft_branches) + " branches" : "") + ", " + r + ")";
    if (mode == DecodeMode::Ngram) return "n-gram (" + std::to_string(ngram_tokens) + " tokens, " + r + ")";
    if (mode == DecodeMode::Eagle)
        return "eagle (" + (eagle_tree == "dynamic" ? "EAGLE-2, " + std::to_string(eagle_nodes) + " nodes" : eagle_tree) +
               ", " + r + ")";
    std::string t = tree;
    if (t.find('/') != std::string::npos) t = std::filesystem::path(t).filename().string();  // a JSON file
    return "medusa (" + t + ", " + std::to_string(num_heads) + " heads, " + r + ")";
}

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
    if (fs::is_regular_file(d.cache_dir + "/eagle/model.safetensors", ec)) d.eagle_path = d.cache_dir + "/eagle";
    return d;
}

std::string apply_trained_defaults(DecodeSettings& s, const std::string& cache_dir, bool heads_chosen,
                                   bool tree_chosen) {
    const DecodeSettings defaults;
    if (s.model_path != defaults.model_path) return "";
    const TrainedDefaults d = find_trained_defaults(cache_dir, "stories260K");
    if (s.eagle_path.empty()) s.eagle_path = d.eagle_path;
    if (!d.found())
        return "No trained heads in " + (d.cache_dir.empty() ? std::string("the cache") : d.cache_dir) +
               " (scripts/train_default_heads.sh makes them): untrained init heads, tree " + s.tree + ".";
    if (!heads_chosen) s.heads_path = d.heads_path;
    if (!tree_chosen) s.tree = d.tree_path;
    return "Trained heads and the tree tuned for this device, from " + d.cache_dir + ".";
}

}  // namespace medusa::chat
