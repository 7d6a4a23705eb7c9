#include "settings_store.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model/atomic_file.h"
#include "model/json_file.h"

namespace medusa::chat {

namespace fs = std::filesystem;
using nlohmann::json;

std::string config_dir() {
    if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) return std::string(x) + "/medusa-vk";
    if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.config/medusa-vk";
    return "";
}

namespace {

// 2: an empty tree means the one tuned for the model. Files before it saved the default tree's
// name when nobody had chosen one.
constexpr int kSettingsVersion = 2;

json to_json(const SavedState& st) {
    const DecodeSettings& s = st.settings;
    return {{"model", s.model_path},          {"tokenizer", s.tokenizer_path}, {"heads", heads_field(s)},
            {"mode", drafter_kind_name(s.mode)},            {"tree", tree_field(s)},         {"num_heads", s.medusa.num_heads},
            {"rule", accept_rule_name(s.rule)},            {"draft", s.draft.model},        {"gamma", s.draft.gamma},
            {"adaptive_gamma", s.draft.adaptive_gamma}, {"fixed_shape", s.fixed_shape}, {"draft_branches", s.draft.branches},
            {"ngram_tokens", s.ngram.max_tokens}, {"eagle", s.eagle.layer},    {"eagle_tree", eagle_tree_word(s.eagle.tree)},
            {"eagle_top_k", s.eagle.top_k},   {"eagle_depth", s.eagle.depth},  {"eagle_nodes", s.eagle.nodes},
            {"temperature", s.sampling.temperature}, {"top_k", s.sampling.top_k}, {"top_p", s.sampling.top_p},
            {"min_p", s.sampling.min_p},      {"repeat_penalty", s.sampling.repeat_penalty},
            {"typical_eps", s.typical.eps},   {"typical_delta", s.typical.delta},
            {"seed", s.sampling.seed},        {"max_new_tokens", s.max_new_tokens},
            {"system_prompt", s.system_prompt}, {"chat_templates", s.chat_templates}, {"window_width", st.window_width},
            {"window_height", st.window_height}, {"tree_all", st.tree_all}, {"tree_fit", st.tree_fit},
            {"tree_zoom", st.tree_zoom},      {"recent_models", st.recent_models}, {"version", kSettingsVersion}};
}

// Reads the keys that are present and of the right type; anything else keeps its default.
template <class T>
void take(const json& j, const char* key, T& out) {
    if (!j.contains(key)) return;
    const json& v = j[key];
    if constexpr (std::is_same_v<T, bool>) {
        if (v.is_boolean()) out = v.get<bool>();
    } else if constexpr (std::is_same_v<T, std::string>) {
        if (v.is_string()) out = v.get<std::string>();
    } else if constexpr (std::is_floating_point_v<T>) {
        if (v.is_number() && std::isfinite(v.get<double>())) out = v.get<T>();
    } else {
        if (v.is_number_integer()) out = v.get<T>();
    }
}

// A mode or rule by its name, or by its index up to `last` as files saved before names hold it;
// anything else keeps the default.
template <class E>
void take_name(const json& j, const char* key, E& out, E (*parse)(const std::string&), E last) {
    if (!j.contains(key)) return;
    const json& v = j[key];
    if (v.is_number_integer()) {
        const auto i = v.get<int64_t>();
        if (i >= 0 && i <= int64_t(last)) out = E(i);
        return;
    }
    if (!v.is_string()) return;
    try {
        out = parse(v.get<std::string>());
    } catch (const std::invalid_argument&) {
    }
}

}  // namespace

void remember_model(std::vector<std::string>& recent, const std::string& path) {
    recent.erase(std::remove(recent.begin(), recent.end(), path), recent.end());
    recent.insert(recent.begin(), path);
    if (recent.size() > kRecentModels) recent.resize(kRecentModels);
}

std::optional<SavedState> load_state(const std::string& path) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) return std::nullopt;
    json j;
    try {
        j = read_json_file(path);  // bounded size and depth
    } catch (const std::exception& e) {
        throw std::runtime_error(std::string(e.what()) + " (not a settings file)");
    }
    if (!j.is_object()) throw std::runtime_error(path + ": not a settings file (not a JSON object)");
    SavedState st;
    DecodeSettings& s = st.settings;
    take(j, "model", s.model_path);
    take(j, "tokenizer", s.tokenizer_path);
    std::string heads = heads_field(s);
    take(j, "heads", heads);
    set_heads_field(s, heads);
    take_name(j, "mode", s.mode, parse_drafter_kind, DrafterKind::Eagle);
    std::string tree = tree_field(s);
    take(j, "tree", tree);
    if (int version = 1; (take(j, "version", version), version) < 2 && tree == MedusaSpec{}.tree) tree.clear();
    set_tree_field(s, tree);
    take(j, "num_heads", s.medusa.num_heads);
    take_name(j, "rule", s.rule, parse_accept_rule, AcceptRule::Sample);
    take(j, "draft", s.draft.model);
    take(j, "gamma", s.draft.gamma);
    take(j, "adaptive_gamma", s.draft.adaptive_gamma);
    take(j, "fixed_shape", s.fixed_shape);
    take(j, "draft_branches", s.draft.branches);
    take(j, "ngram_tokens", s.ngram.max_tokens);
    take(j, "eagle", s.eagle.layer);
    std::string eagle_tree = eagle_tree_word(s.eagle.tree);
    take(j, "eagle_tree", eagle_tree);
    s.eagle.tree = parse_eagle_tree(eagle_tree);
    take(j, "eagle_top_k", s.eagle.top_k);
    take(j, "eagle_depth", s.eagle.depth);
    take(j, "eagle_nodes", s.eagle.nodes);
    take(j, "temperature", s.sampling.temperature);
    take(j, "top_k", s.sampling.top_k);
    take(j, "top_p", s.sampling.top_p);
    take(j, "min_p", s.sampling.min_p);
    take(j, "repeat_penalty", s.sampling.repeat_penalty);
    take(j, "typical_eps", s.typical.eps);
    take(j, "typical_delta", s.typical.delta);
    take(j, "seed", s.sampling.seed);
    take(j, "max_new_tokens", s.max_new_tokens);
    take(j, "system_prompt", s.system_prompt);
    // Chosen chat templates by model path: names a template has, kChosenTemplates at most.
    if (j.contains("chat_templates") && j["chat_templates"].is_object())
        for (const auto& [model, name] : j["chat_templates"].items())
            if (name.is_string() && parse_chat_template(name.get<std::string>()) &&
                s.chat_templates.size() < kChosenTemplates)
                s.chat_templates[model] = name.get<std::string>();
    take(j, "window_width", st.window_width);
    take(j, "window_height", st.window_height);
    take(j, "tree_all", st.tree_all);
    take(j, "tree_fit", st.tree_fit);
    take(j, "tree_zoom", st.tree_zoom);
    if (j.contains("recent_models") && j["recent_models"].is_array()) {
        const json& list = j["recent_models"];
        for (auto p = list.rbegin(); p != list.rend(); ++p)  // the last first, so the first ends up in front
            if (p->is_string() && !p->get<std::string>().empty()) remember_model(st.recent_models, p->get<std::string>());
    }
    // Values a hand edit may have broken are brought back into the ranges the controls offer.
    s.medusa.num_heads = std::clamp(s.medusa.num_heads, 1, 7);
    s.draft.gamma = std::clamp(s.draft.gamma, 1, 16);
    s.max_new_tokens = std::clamp(s.max_new_tokens, 1, 4096);
    SamplingParams& p = s.sampling;
    p.temperature = std::clamp(p.temperature, 0.05f, 2.0f);
    p.top_p = std::clamp(p.top_p, 0.05f, 1.0f);
    p.min_p = std::clamp(p.min_p, 0.0f, 0.5f);
    p.top_k = std::clamp(p.top_k, 0, 1000);
    p.repeat_penalty = std::clamp(p.repeat_penalty, 1.0f, 2.0f);
    st.window_width = std::clamp(st.window_width, 640, 8192);
    st.window_height = std::clamp(st.window_height, 400, 8192);
    st.tree_zoom = std::clamp(st.tree_zoom, 0.1f, 2.0f);
    return st;
}

void save_state(const std::string& path, const SavedState& state) {
    const fs::path p(path);
    std::error_code ec;
    fs::create_directories(p.parent_path(), ec);
    if (ec) throw std::runtime_error(p.parent_path().string() + ": cannot create the folder: " + ec.message());
    write_file_atomically(path, json_text(to_json(state)));
}

}  // namespace medusa::chat
