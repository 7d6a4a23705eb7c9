#include "model/hf_loader.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <list>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "model/dequantize.h"
#include "model/file_bytes.h"
#include "model/fused_tensors.h"
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

// Gemma3ForConditionalGeneration nests its language model's config in text_config (model_type
// "gemma3"); the language model is what runs.
const json& text_config(const json& j) {
    if (auto it = j.find("text_config"); it != j.end() && it->is_object() && j.value("model_type", "") == "gemma3")
        return *it;
    return j;
}

LlamaConfig parse_config(const json& root, const std::string& name, const FamilyTraits*& family_out) {
    const json& j = text_config(root);
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
    if (auto it = j.find("model_type"); it != j.end()) model_type = it->is_string() ? it->get<std::string>() : "";
    const FamilyTraits* family = family_by_hf_model_type(model_type);
    if (!family) {
        std::string known;
        const auto& all = families();
        for (size_t i = 0; i < all.size(); ++i)
            known += std::string(i == 0 ? "" : i + 1 == all.size() ? " and " : ", ") + "\"" + all[i].hf_model_type + "\"";
        bad("model_type " + shown(j.at("model_type")) + " is not supported (" + known + " are)");
    }
    family_out = family;
    const char* wanted_act = family->activation == GateActivation::Silu ? "silu" : "gelu_pytorch_tanh";
    for (const char* key : {"hidden_act", "hidden_activation"})
        if (auto it = j.find(key); it != j.end() && !it->is_null() &&
                                   (!it->is_string() || it->get<std::string>() != wanted_act))
            bad(std::string(key) + " " + shown(*it) + " is not supported for " + family->hf_model_type + " (only \"" +
                wanted_act + "\")");
    if (auto it = j.find("attention_bias"); !family->qkv_bias && it != j.end() && *it == true)
        bad("attention_bias (biases on every attention projection, o_proj's too) is not supported for " + model_type);
    if (auto it = j.find("mlp_bias"); it != j.end() && *it == true)
        bad("mlp_bias (biases on the gate, up and down projections) is not supported: refused rather than decoded "
            "without them");
    for (const char* cap : {"final_logit_softcapping", "attn_logit_softcapping"})
        if (auto it = j.find(cap); it != j.end() && !it->is_null())
            bad(std::string(cap) + " is set: logit soft-capping (Gemma 2's) is not supported");
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
    c.tied_classifier = family->family == ModelFamily::Gemma3;  // HF's defaults: Gemma ties, the others do not
    c.qkv_bias = family->qkv_bias;
    if (auto it = j.find("tie_word_embeddings"); it != j.end()) {
        if (!it->is_boolean()) bad("'tie_word_embeddings' is not a boolean");
        c.tied_classifier = it->get<bool>();
    }
    ArchitectureFeatures& a = c.arch;
    a = features_of(*family);
    if (j.contains("head_dim") && !j["head_dim"].is_null()) c.head_size = integer("head_dim", 0, true);
    if (c.head_size > 0 && c.n_heads > 0 && c.head_size * c.n_heads == c.dim) c.head_size = 0;  // the usual one
    const int head = c.head_size > 0 ? c.head_size : (c.n_heads > 0 ? c.dim / c.n_heads : 0);
    if (family->partial_rope && j.contains("partial_rotary_factor")) {
        const double f = number("partial_rotary_factor", 1.0);
        if (!(f > 0 && f <= 1)) bad("'partial_rotary_factor' is not in (0, 1]");
        const int rotated = c.n_heads > 0 ? int(f * c.dim) / c.n_heads : head;  // as llama.cpp's converter rounds it
        if (rotated != head) a.rope_dims = rotated;
    }
    if (family->scaled_embedding) a.embedding_scale = std::sqrt(float(c.dim));
    if (j.contains("query_pre_attn_scalar")) {
        const double q = number("query_pre_attn_scalar", 0);
        if (!(q > 0)) bad("'query_pre_attn_scalar' is not positive");
        a.attention_scale = float(1.0 / std::sqrt(q));
    }
    if (family->sliding_window) {
        a.sliding_window = integer("sliding_window", 0, false);
        if (a.sliding_window < 0) bad("'sliding_window' is negative");
        if (a.sliding_window > 0) {
            if (auto it = j.find("layer_types"); it != j.end() && it->is_array()) {
                for (const auto& t : *it) {
                    if (!t.is_string() || (t != "sliding_attention" && t != "full_attention"))
                        bad("'layer_types' holds " + shown(t) + " (\"sliding_attention\" or \"full_attention\" expected)");
                    a.local_layers.push_back(t == "sliding_attention" ? 1 : 0);
                }
            } else {
                a.local_layers = local_layer_pattern(c.n_layers, integer("sliding_window_pattern",
                                                                          family->default_window_pattern, false));
            }
            a.local_rope_theta = float(number("rope_local_base_freq", 10000.0));
        }
    }
    return c;
}

// HF tensor names -> the canonical names of model_file.h ("" = not used by the engine).
std::string canonical_name(const std::string& full, const FamilyTraits& family) {
    // Gemma3ForConditionalGeneration keeps its language model under language_model (two spellings
    // over Transformers' versions); the vision tower's tensors are not the language model's.
    std::string n = full;
    for (const char* prefix : {"language_model.model.", "model.language_model."})
        if (n.rfind(prefix, 0) == 0) n = "model." + n.substr(std::string(prefix).size());
    if (n == "language_model.lm_head.weight") n = "lm_head.weight";
    if (n == "model.embed_tokens.weight") return "tok_embeddings";
    if (n == "model.norm.weight") return "norm";
    if (n == "lm_head.weight") return "output";
    static const std::map<std::string, std::string> per_layer = {
        {"input_layernorm.weight", "attention_norm"}, {"post_attention_layernorm.weight", "ffn_norm"},
        {"self_attn.q_proj.weight", "wq"},            {"self_attn.k_proj.weight", "wk"},
        {"self_attn.v_proj.weight", "wv"},            {"self_attn.o_proj.weight", "wo"},
        {"mlp.gate_proj.weight", "w1"},               {"mlp.down_proj.weight", "w2"},
        {"mlp.up_proj.weight", "w3"},                 {"self_attn.q_proj.bias", "bq"},
        {"self_attn.k_proj.bias", "bk"},              {"self_attn.v_proj.bias", "bv"},
        {"self_attn.q_norm.weight", "q_norm"},        {"self_attn.k_norm.weight", "k_norm"},
        {"self_attn.qkv_proj.weight", "wqkv"},        {"mlp.gate_up_proj.weight", "w13"}};
    // Sandwich norms (Gemma): post_attention_layernorm follows the attention; the FFN has a pre and a post norm.
    static const std::map<std::string, std::string> sandwich = {
        {"post_attention_layernorm.weight", "post_attention_norm"},
        {"pre_feedforward_layernorm.weight", "ffn_norm"},
        {"post_feedforward_layernorm.weight", "post_ffn_norm"}};
    const std::string prefix = "model.layers.";
    if (n.compare(0, prefix.size(), prefix) != 0) return "";
    const size_t dot = n.find('.', prefix.size());
    if (dot == std::string::npos || dot == prefix.size() || dot - prefix.size() > 6) return "";
    const std::string layer = n.substr(prefix.size(), dot - prefix.size());
    if (layer.find_first_not_of("0123456789") != std::string::npos || (layer.size() > 1 && layer[0] == '0')) return "";
    const std::string rest = n.substr(dot + 1);
    if (family.post_norms)
        if (auto it = sandwich.find(rest); it != sandwich.end()) return "layers." + layer + "." + it->second;
    auto it = per_layer.find(rest);
    return it == per_layer.end() ? "" : "layers." + layer + "." + it->second;
}

// LongRoPE's factors (Phi-3): config.json's rope_scaling {type "longrope" or "su", short_factor,
// long_factor} become the rope_factors_short/_long tensors, with the attention factor and the
// original context as llama.cpp's converter derives them.
void read_long_rope(const json& j, LlamaConfig& c, std::list<std::vector<uint8_t>>& owned, std::vector<Tensor>& out,
                    const std::string& name) {
    auto it = j.find("rope_scaling");
    if (it == j.end() || it->is_null()) return;
    auto bad = [&](const std::string& what) { throw FormatError(name + ": config.json: rope_scaling " + what); };
    if (!it->is_object()) bad("is not an object");
    const std::string type = it->value("type", it->value("rope_type", std::string()));
    if (type != "longrope" && type != "su") bad("type '" + type + "' is not supported for phi3 (longrope is)");
    const int pairs = rotated_dims(c) / 2;
    for (const char* key : {"short_factor", "long_factor"}) {
        auto f = it->find(key);
        if (f == it->end() || !f->is_array() || f->size() != size_t(pairs))
            bad(std::string("'") + key + "' must be an array of " + std::to_string(pairs) + " numbers (rotated dimensions / 2)");
        auto& bytes = owned.emplace_back(size_t(pairs) * 4);
        for (int i = 0; i < pairs; ++i) {
            const json& v = (*f)[size_t(i)];
            if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>()))
                bad(std::string("'") + key + "' holds a value that is not a positive number");
            const float x = float(v.get<double>());
            std::memcpy(bytes.data() + 4 * i, &x, 4);
        }
        out.push_back({key[0] == 's' ? "rope_factors_short" : "rope_factors_long", DType::F32, {int64_t(pairs)}, 0,
                       bytes.data(), bytes.size()});
    }
    auto orig = j.find("original_max_position_embeddings");
    if (orig == j.end() || !orig->is_number_integer() || orig->get<int64_t>() <= 0 || orig->get<int64_t>() > (1 << 24))
        bad("needs a positive 'original_max_position_embeddings' beside it");
    c.arch.rope_original_context = int(orig->get<int64_t>());
    const double scale = double(c.seq_len) / c.arch.rope_original_context;
    c.arch.rope_attn_factor = scale > 1 ? float(std::sqrt(1 + std::log(scale) / std::log(double(c.arch.rope_original_context)))) : 1.0f;
}

// Gemma's RMSNorm multiplies by (1 + w): its gains, as f32 copies, become the gains themselves.
void shift_norm_gains(ModelFile& m, std::list<std::vector<uint8_t>>& owned) {
    for (Tensor& t : m.tensors) {
        const std::string& n = t.name;
        const bool norm = n == "norm" || (n.size() > 5 && n.compare(n.size() - 5, 5, "_norm") == 0);
        if (!norm || t.shape.size() != 1) continue;
        std::vector<float> v = dequantize(t);
        for (float& x : v) x += 1.0f;
        auto& bytes = owned.emplace_back(v.size() * 4);
        std::memcpy(bytes.data(), v.data(), bytes.size());
        t.type = DType::F32;
        t.group_size = 0;
        t.data = bytes.data();
        t.nbytes = bytes.size();
    }
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
    const json root = parse_json(config_json, name + ": config.json");
    const json& config = text_config(root);
    const FamilyTraits* family = nullptr;
    m.config = parse_config(root, name, family);
    validate_config(m.config, name);
    auto storage = std::make_shared<HfStorage>();
    if (family->long_rope) read_long_rope(config, m.config, storage->owned, m.tensors, name);
    // Llama 3's RoPE factors become the rope_freqs tensor, as llama.cpp's converter writes them.
    else if (auto factors = parse_rope_scaling(config, m.config, name + ": config.json"); !factors.empty()) {
        auto& bytes = storage->owned.emplace_back(factors.size() * 4);
        std::memcpy(bytes.data(), factors.data(), bytes.size());
        m.tensors.push_back({"rope_freqs", DType::F32, {int64_t(factors.size())}, 0, bytes.data(), bytes.size()});
    }
    validate_config(m.config, name);  // again: rope_scaling may have set a factor
    std::set<std::string> seen;  // not m.find(): a scan per tensor is quadratic in a hostile shard
    for (const auto& shard : shards) {
        for (const Tensor& t : shard.tensors()) {
            const std::string canon = canonical_name(t.name, *family);
            if (canon.empty() && t.name.find("model.layers.") != std::string::npos && t.name.size() > 5 &&
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
    split_fused_tensors(m);
    validate_llama_tensors(m);
    if (family->hf_norm_gain == NormGain::OnePlusStored) shift_norm_gains(m, storage->owned);
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
    // The folder's tokenizer: tokenizer.json (byte-level BPE, or the tokenizer.model it stands beside
    // for a sentencepiece-style one), else a sentencepiece tokenizer.model.
    if (fs::exists(dir / "tokenizer.json", ec)) {
        m.embedded_tokenizer = load_hf_vocab(dir.string());
        if (m.embedded_tokenizer.bpe && m.embedded_tokenizer.bpe->tokens.size() != size_t(m.config.vocab_size))
            throw FormatError((dir / "tokenizer.json").string() + ": has " +
                              std::to_string(m.embedded_tokenizer.bpe->tokens.size()) + " tokens but " + path +
                              " has a vocabulary of " + std::to_string(m.config.vocab_size));
    } else if (fs::exists(dir / "tokenizer.model", ec)) {
        m.embedded_tokenizer.sentencepiece = read_text(dir / "tokenizer.model");
    }
    return m;
}

}  // namespace medusa
