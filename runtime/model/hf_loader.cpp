#include "model/hf_loader.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <list>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "model/file_bytes.h"

namespace medusa {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Keeps the shards and the re-ordered q/k copies alive for Tensor::data.
struct HfStorage {
    std::vector<SafetensorsFile> shards;
    std::list<std::vector<uint8_t>> owned;  // a list: its buffers never move
};

std::string read_text(const fs::path& p) {
    auto bytes = read_file_bytes(p.string());
    return std::string(bytes->begin(), bytes->end());
}

json parse_json(const std::string& text, const std::string& name) {
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) throw FormatError(name + ": not a JSON object");
    return j;
}

LlamaConfig parse_config(const json& j, const std::string& name) {
    auto bad = [&](const std::string& what) { throw FormatError(name + ": config.json: " + what); };
    auto integer = [&](const char* key, int fallback, bool required) -> int {
        auto it = j.find(key);
        if (it == j.end() || it->is_null()) {
            if (required) bad(std::string("'") + key + "' is missing");
            return fallback;
        }
        if (!it->is_number_integer()) bad(std::string("'") + key + "' is not an integer");
        const int64_t v = it->get<int64_t>();
        if (v < INT32_MIN || v > INT32_MAX) bad(std::string("'") + key + "' is out of range");
        return int(v);
    };
    auto number = [&](const char* key, double fallback) -> double {
        auto it = j.find(key);
        if (it == j.end() || it->is_null()) return fallback;
        if (!it->is_number()) bad(std::string("'") + key + "' is not a number");
        const double v = it->get<double>();
        if (!std::isfinite(v) || std::fabs(v) > 1e30) bad(std::string("'") + key + "' is out of range");
        return v;
    };
    // Quoted string values only: dump() of a deeply nested value would recurse.
    auto shown = [](const json& v) {
        return v.is_string() ? "\"" + v.get<std::string>() + "\"" : std::string(v.type_name());
    };
    if (auto it = j.find("model_type"); it != j.end() && (!it->is_string() || it->get<std::string>() != "llama"))
        bad("model_type " + shown(*it) + " is not supported (only \"llama\")");
    if (auto it = j.find("hidden_act"); it != j.end() && (!it->is_string() || it->get<std::string>() != "silu"))
        bad("hidden_act " + shown(*it) + " is not supported (only \"silu\")");
    if (auto it = j.find("rope_scaling"); it != j.end() && !it->is_null()) bad("rope_scaling is not supported");
    LlamaConfig c;
    c.dim = integer("hidden_size", 0, true);
    c.hidden_dim = integer("intermediate_size", 0, true);
    c.n_layers = integer("num_hidden_layers", 0, true);
    c.n_heads = integer("num_attention_heads", 0, true);
    c.n_kv_heads = integer("num_key_value_heads", c.n_heads, false);
    c.vocab_size = integer("vocab_size", 0, true);
    c.seq_len = integer("max_position_embeddings", 2048, false);
    c.rope_theta = float(number("rope_theta", 10000.0));
    c.rms_eps = float(number("rms_norm_eps", 1e-6));  // HF LlamaConfig's default
    c.tied_classifier = false;                        // HF LlamaConfig's default
    if (auto it = j.find("tie_word_embeddings"); it != j.end()) {
        if (!it->is_boolean()) bad("'tie_word_embeddings' is not a boolean");
        c.tied_classifier = it->get<bool>();
    }
    return c;
}

// HF tensor names -> the canonical names of model_file.h ("" = not used by the engine).
std::string canonical_name(const std::string& n) {
    if (n == "model.embed_tokens.weight") return "tok_embeddings";
    if (n == "model.norm.weight") return "norm";
    if (n == "lm_head.weight") return "output";
    static const std::map<std::string, std::string> per_layer = {
        {"input_layernorm.weight", "attention_norm"}, {"post_attention_layernorm.weight", "ffn_norm"},
        {"self_attn.q_proj.weight", "wq"},            {"self_attn.k_proj.weight", "wk"},
        {"self_attn.v_proj.weight", "wv"},            {"self_attn.o_proj.weight", "wo"},
        {"mlp.gate_proj.weight", "w1"},               {"mlp.down_proj.weight", "w2"},
        {"mlp.up_proj.weight", "w3"}};
    const std::string prefix = "model.layers.";
    if (n.compare(0, prefix.size(), prefix) != 0) return "";
    const size_t dot = n.find('.', prefix.size());
    if (dot == std::string::npos || dot == prefix.size() || dot - prefix.size() > 6) return "";
    const std::string layer = n.substr(prefix.size(), dot - prefix.size());
    if (layer.find_first_not_of("0123456789") != std::string::npos || (layer.size() > 1 && layer[0] == '0')) return "";
    auto it = per_layer.find(n.substr(dot + 1));
    return it == per_layer.end() ? "" : "layers." + layer + "." + it->second;
}

// The shard files of a folder, from model.safetensors or the index's weight_map.
std::vector<SafetensorsFile> open_shards(const fs::path& dir, const fs::path& index) {
    if (index.empty()) return {SafetensorsFile::open((dir / "model.safetensors").string())};
    const std::string name = index.string();
    const json j = parse_json(read_text(index), name);
    auto map = j.find("weight_map");
    if (map == j.end() || !map->is_object() || map->empty()) throw FormatError(name + ": 'weight_map' is missing or empty");
    std::set<std::string> files;
    for (const auto& [tensor, file] : map->items()) {
        if (!file.is_string()) throw FormatError(name + ": weight_map entry '" + tensor + "' is not a file name");
        const std::string f = file.get<std::string>();
        // Only plain names: an index must not point outside its folder.
        if (f.empty() || f == "." || f == ".." || f.find_first_of("/\\") != std::string::npos)
            throw FormatError(name + ": weight_map names an invalid shard '" + f + "'");
        files.insert(f);
    }
    if (files.size() > 4096) throw FormatError(name + ": too many shards");
    std::vector<SafetensorsFile> shards;
    for (const auto& f : files) shards.push_back(SafetensorsFile::open((dir / f).string()));
    for (const auto& [tensor, file] : map->items()) {
        const std::string f = file.get<std::string>();
        for (const auto& s : shards)
            if (fs::path(s.path()).filename() == f && !s.find(tensor))
                throw FormatError(name + ": tensor '" + tensor + "' is not in its shard " + f);
    }
    return shards;
}

}  // namespace

std::vector<uint8_t> permute_rope_rows(const uint8_t* data, int64_t rows, size_t row_bytes, int n_heads, bool to_hf) {
    if (n_heads <= 0 || rows % (2 * int64_t(n_heads)) != 0)
        throw std::invalid_argument("permute_rope_rows: rows must split into heads of even size");
    const int64_t head = rows / n_heads, half = head / 2;
    std::vector<uint8_t> out(size_t(rows) * row_bytes);
    for (int64_t h = 0; h < n_heads; ++h)
        for (int64_t i = 0; i < half; ++i)
            for (int64_t j = 0; j < 2; ++j) {
                const int64_t adjacent = h * head + 2 * i + j, rotate_half = h * head + j * half + i;
                const int64_t from = to_hf ? adjacent : rotate_half, to = to_hf ? rotate_half : adjacent;
                std::memcpy(out.data() + size_t(to) * row_bytes, data + size_t(from) * row_bytes, row_bytes);
            }
    return out;
}

ModelFile load_hf_from_parts(std::vector<SafetensorsFile> shards, const std::string& config_json,
                             const std::string& name) {
    ModelFile m;
    m.path = name;
    m.format = "safetensors";
    m.config = parse_config(parse_json(config_json, name + ": config.json"), name);
    validate_config(m.config, name);
    auto storage = std::make_shared<HfStorage>();
    for (const auto& shard : shards) {
        for (const Tensor& t : shard.tensors()) {
            const std::string canon = canonical_name(t.name);
            if (canon.empty()) continue;
            if (m.find(canon))
                throw FormatError(shard.path() + ": tensor '" + t.name + "' appears more than once in " + name);
            Tensor c = t;
            c.name = canon;
            m.tensors.push_back(std::move(c));
        }
    }
    LlamaConfig& c = m.config;
    if (c.tied_classifier) {  // lm_head, if saved anyway, is a copy of the embedding
        std::erase_if(m.tensors, [](const Tensor& t) { return t.name == "output"; });
    } else if (!m.find("output")) {
        c.tied_classifier = true;  // no lm_head saved: the embedding is the classifier
    }
    validate_llama_tensors(m);
    // Undo HF's q/k row permutation so RoPE rotates adjacent pairs like every other format.
    for (Tensor& t : m.tensors) {
        const bool q = t.name.size() > 3 && t.name.compare(t.name.size() - 3, 3, ".wq") == 0;
        const bool k = t.name.size() > 3 && t.name.compare(t.name.size() - 3, 3, ".wk") == 0;
        if (!q && !k) continue;
        const size_t row_bytes = t.nbytes / size_t(t.shape[0]);
        auto& copy = storage->owned.emplace_back(
            permute_rope_rows(t.data, t.shape[0], row_bytes, q ? c.n_heads : c.n_kv_heads, /*to_hf=*/false));
        t.data = copy.data();
    }
    storage->shards = std::move(shards);
    m.storage = storage;
    return m;
}

ModelFile load_hf(const std::string& path) {
    std::error_code ec;
    fs::path p(path), dir = p, index;
    const bool is_dir = fs::is_directory(p, ec);
    if (!is_dir) dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
    const fs::path config = dir / "config.json";
    if (!fs::exists(config, ec))
        throw FormatError(path + ": a Hugging Face model needs its config.json (looked for " + config.string() + ")");
    std::vector<SafetensorsFile> shards;
    if (!is_dir && p.extension() == ".safetensors") {
        shards.push_back(SafetensorsFile::open(path));
    } else {
        if (!is_dir) index = p;
        else if (fs::exists(dir / "model.safetensors", ec)) index.clear();
        else if (fs::exists(dir / "model.safetensors.index.json", ec)) index = dir / "model.safetensors.index.json";
        else throw FormatError(path + ": no model.safetensors or model.safetensors.index.json in this folder");
        shards = open_shards(dir, index);
    }
    return load_hf_from_parts(std::move(shards), read_text(config), path);
}

}  // namespace medusa
