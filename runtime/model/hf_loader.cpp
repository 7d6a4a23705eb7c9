#include "model/hf_loader.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <list>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "model/file_bytes.h"
#include "model/hf_tokenizer.h"
#include "model/json_file.h"
#include "model/rope_rows.h"
#include "model/rope_scaling.h"

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
    return read_text_file(p.string());  // regular file, at most 64 MiB
}

json parse_json(const std::string& text, const std::string& name) {
    check_json_depth(text.data(), text.data() + text.size(), name);
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
    std::string model_type = "llama";
    if (auto it = j.find("model_type"); it != j.end()) {
        model_type = it->is_string() ? it->get<std::string>() : "";
        if (model_type != "llama" && model_type != "qwen2")
            bad("model_type " + shown(*it) + " is not supported (\"llama\" and \"qwen2\" are)");
    }
    if (auto it = j.find("hidden_act"); it != j.end() && (!it->is_string() || it->get<std::string>() != "silu"))
        bad("hidden_act " + shown(*it) + " is not supported (only \"silu\")");
    if (auto it = j.find("attention_bias"); model_type == "llama" && it != j.end() && *it == true)
        bad("attention_bias (biases on every attention projection, o_proj's too) is not supported for llama");
    if (auto it = j.find("mlp_bias"); it != j.end() && *it == true)
        bad("mlp_bias (biases on the gate, up and down projections) is not supported: refused rather than decoded "
            "without them");
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
    c.qkv_bias = model_type == "qwen2";
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
        {"mlp.up_proj.weight", "w3"},                 {"self_attn.q_proj.bias", "bq"},
        {"self_attn.k_proj.bias", "bk"},              {"self_attn.v_proj.bias", "bv"}};
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
    std::map<std::string, size_t> shard_of_file;
    for (const auto& f : files) {
        shard_of_file[f] = shards.size();
        shards.push_back(SafetensorsFile::open((dir / f).string()));
    }
    // One look-up per entry (no scan of the shards or of their tensors): an index of a quarter of a
    // million entries is checked in well under a second.
    for (const auto& [tensor, file] : map->items()) {
        const std::string& f = file.get_ref<const std::string&>();
        if (!shards[shard_of_file.at(f)].find(tensor))
            throw FormatError(name + ": tensor '" + tensor + "' is not in its shard " + f);
    }
    return shards;
}

}  // namespace

ModelFile load_hf_from_parts(std::vector<SafetensorsFile> shards, const std::string& config_json,
                             const std::string& name) {
    ModelFile m;
    m.path = name;
    m.format = ModelFormat::Safetensors;
    const json config = parse_json(config_json, name + ": config.json");
    m.config = parse_config(config, name);
    validate_config(m.config, name);
    auto storage = std::make_shared<HfStorage>();
    // Llama 3's RoPE factors become the rope_freqs tensor, as llama.cpp's converter writes them.
    if (auto factors = parse_rope_scaling(config, m.config, name + ": config.json"); !factors.empty()) {
        auto& bytes = storage->owned.emplace_back(factors.size() * 4);
        std::memcpy(bytes.data(), factors.data(), bytes.size());
        m.tensors.push_back({"rope_freqs", DType::F32, {int64_t(factors.size())}, 0, bytes.data(), bytes.size()});
    }
    validate_config(m.config, name);  // again: rope_scaling may have set a factor
    std::set<std::string> seen;  // not m.find(): a scan per tensor is quadratic in a hostile shard
    for (const auto& shard : shards) {
        for (const Tensor& t : shard.tensors()) {
            const std::string canon = canonical_name(t.name);
            if (canon.empty() && t.name.rfind("model.layers.", 0) == 0 && t.name.size() > 5 &&
                t.name.compare(t.name.size() - 5, 5, ".bias") == 0)
                throw FormatError(shard.path() + ": tensor '" + t.name +
                                  "' is a bias this engine does not apply (it applies those of q_proj, k_proj and "
                                  "v_proj): refused rather than decoded without it");
            if (canon.empty()) continue;
            if (!seen.insert(canon).second)
                throw FormatError(shard.path() + ": tensor '" + t.name + "' appears more than once in " + name);
            if (canon.rfind("layers.", 0) == 0 && std::stoll(canon.substr(7)) >= m.config.n_layers)
                throw FormatError(shard.path() + ": tensor '" + t.name + "' belongs to a layer past the " +
                                  std::to_string(m.config.n_layers) + " of " + name + "'s config.json");
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
    // Biases of q/k/v beside a llama config that does not declare them are applied, not skipped.
    if (m.find("layers.0.bq") || m.find("layers.0.bk") || m.find("layers.0.bv")) c.qkv_bias = true;
    validate_llama_tensors(m);
    // HF stores q/k rows for rotate_half: back to adjacent pairs like every other format.
    reorder_rotate_half_rows(m, storage->owned);
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
    ModelFile m = load_hf_from_parts(std::move(shards), read_text(config), path);
    // The folder's tokenizer: tokenizer.json (byte-level BPE), else a sentencepiece tokenizer.model.
    if (fs::exists(dir / "tokenizer.json", ec)) {
        m.embedded_tokenizer = load_hf_vocab(dir.string());
        if (m.embedded_tokenizer.bpe->tokens.size() != size_t(m.config.vocab_size))
            throw FormatError((dir / "tokenizer.json").string() + ": has " +
                              std::to_string(m.embedded_tokenizer.bpe->tokens.size()) + " tokens but " + path +
                              " has a vocabulary of " + std::to_string(m.config.vocab_size));
    } else if (fs::exists(dir / "tokenizer.model", ec)) {
        m.embedded_tokenizer.sentencepiece = read_text(dir / "tokenizer.model");
    }
    return m;
}

}  // namespace medusa
