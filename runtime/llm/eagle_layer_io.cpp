#include "llm/eagle_layer_io.h"

#include <cfloat>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "llm/eagle3_gguf.h"
#include "llm/matrix_views.h"
#include "model/atomic_file.h"
#include "model/dequantize.h"
#include "model/file_bytes.h"
#include "model/hf_loader.h"
#include "model/json_file.h"
#include "model/rope_scaling.h"
#include "model/safetensors_file.h"
#include "model/torch_checkpoint.h"

namespace medusa {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kWeights = "model.safetensors";
constexpr const char* kTorchWeights = "pytorch_model.bin";  // torch.save's ZIP, read without running it
const std::string kLayer = "layers.0.";

std::vector<float> read(const SafetensorsFile& f, const std::string& key, std::vector<int64_t> shape) {
    const Tensor* t = f.find(key);
    if (!t) throw FormatError(f.path() + ": tensor '" + key + "' is missing");
    if (t->shape != shape)
        throw FormatError(f.path() + ": tensor '" + key + "' has shape " + shape_text(t->shape) + ", expected " +
                          shape_text(shape));
    return dequantize(*t);
}

// The type the layer's matrices share, if F16 or BF16 (llm/matrix_views.h): the decoder layer's
// under `prefix` and the `others`.
DType matrix_type_of(const SafetensorsFile& f, const std::string& prefix, std::vector<std::string> others) {
    for (const char* w : {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "mlp.gate_proj",
                          "mlp.up_proj", "mlp.down_proj"})
        others.push_back(prefix + w + ".weight");
    std::vector<DType> types;
    for (const std::string& n : others)
        if (const Tensor* t = f.find(n)) types.push_back(t->type);
    return common_half_type(types);
}

// Reorders q/k rows between HF's rotate_half order and adjacent pairs (see permute_rope_rows).
std::vector<float> permute(const std::vector<float>& w, int rows, int cols, int heads, bool to_hf) {
    const auto bytes = permute_rope_rows(reinterpret_cast<const uint8_t*>(w.data()), rows, size_t(cols) * 4, heads, to_hf);
    std::vector<float> out(w.size());
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
}

int config_int(const json& j, const std::string& key, const std::string& where) {
    if (!j.contains(key) || !j[key].is_number_integer())
        throw FormatError(where + ": '" + key + "' is missing or not an integer");
    // A uint64 above INT64_MAX would wrap to a negative int64: range-check it as unsigned.
    if (j[key].is_number_unsigned() && j[key].get<uint64_t>() > uint64_t(1 << 20))
        throw FormatError(where + ": '" + key + "' = " + json_excerpt(j[key]) + " is out of range");
    const auto v = j[key].get<int64_t>();
    if (v < 1 || v > (1 << 20)) throw FormatError(where + ": '" + key + "' = " + std::to_string(v) + " is out of range");
    return int(v);
}

// A number strictly between `lo` and `hi` once it is a float: 1e-60 would become 0 and 1e300
// infinity. `range` says so in the error.
float config_float(const json& j, const std::string& key, float fallback, float lo, float hi, const char* range,
                   const std::string& where) {
    if (!j.contains(key)) return fallback;
    if (!j[key].is_number()) throw FormatError(where + ": '" + key + "' is not a number");
    const double v = j[key].get<double>();
    const float f = std::isfinite(v) && std::fabs(v) <= FLT_MAX ? float(v) : NAN;
    if (!(f > lo && f < hi))
        throw FormatError(where + ": '" + key + "' = " + json_excerpt(j[key]) + " is out of range (" + range + ")");
    return f;
}

bool is_eagle3_config(const json& j) {
    if (j.contains("draft_vocab_size")) return true;
    const auto a = j.find("architectures");
    if (a == j.end() || !a->is_array()) return false;
    return std::any_of(a->begin(), a->end(),
                       [](const json& x) { return x.is_string() && x.get<std::string>() == "LlamaForCausalLMEagle3"; });
}

// The target layers whose inputs EAGLE-3 fuses: eagle_config.eagle_aux_hidden_state_layer_ids as
// listed, else SafeAILab's rule, layers 2, L/2 and L-3 of an L-layer target, each once, in layer
// order (a small target may collapse them to one).
std::vector<int> eagle3_layers(const json& j, const std::string& where, int target_layers) {
    std::vector<int> layers;
    const auto ec = j.find("eagle_config");
    if (ec != j.end() && ec->is_object() && ec->contains("eagle_aux_hidden_state_layer_ids")) {
        const json& ids = (*ec)["eagle_aux_hidden_state_layer_ids"];
        if (!ids.is_array() || ids.empty() || ids.size() > 16)
            throw FormatError(where + ": eagle_aux_hidden_state_layer_ids must list 1 to 16 layer numbers");
        for (const json& id : ids) {
            if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= target_layers)
                throw FormatError(where + ": eagle_aux_hidden_state_layer_ids names layer " + json_excerpt(id) +
                                  ", but the target model has layers 0 to " + std::to_string(target_layers - 1));
            const int l = int(id.get<int64_t>());
            if (std::find(layers.begin(), layers.end(), l) != layers.end())
                throw FormatError(where + ": eagle_aux_hidden_state_layer_ids names layer " + std::to_string(l) + " twice");
            layers.push_back(l);
        }
        return layers;
    }
    layers = eagle3_default_layers(target_layers);
    if (layers.empty()) throw FormatError(where + ": a target of " + std::to_string(target_layers) + " layers has none for EAGLE-3 to read");
    return layers;
}

// config.json's part: the layer's shape, checked against the target, and whether fc has a bias.
EagleLayer layer_of_config(const std::string& config_json, const std::string& where, const LlamaConfig& target,
                           bool& bias, int64_t& draft_vocab) {
    const json j = parse_json_text(config_json, where);  // shallow, or a FormatError naming the file
    if (!j.is_object()) throw FormatError(where + ": not a JSON object");
    EagleLayer e;
    if (is_eagle3_config(j)) e.version = EagleVersion::Eagle3;
    e.dim = config_int(j, "hidden_size", where);
    e.hidden_dim = config_int(j, "intermediate_size", where);
    e.n_heads = config_int(j, "num_attention_heads", where);
    e.n_kv_heads = j.contains("num_key_value_heads") ? config_int(j, "num_key_value_heads", where) : e.n_heads;
    // Drafters of Qwen3 targets carry the target's head_dim, which is not hidden_size / heads.
    if (j.contains("head_dim") && !j["head_dim"].is_null()) {
        e.head_size = config_int(j, "head_dim", where);
        if (e.head_size * e.n_heads == e.dim) e.head_size = 0;
    }
    if (j.contains("num_hidden_layers") && config_int(j, "num_hidden_layers", where) != 1)
        throw FormatError(where + ": EAGLE layers with " + std::to_string(j["num_hidden_layers"].get<int64_t>()) +
                          " decoder layers are not supported (EAGLE-1, EAGLE-2 and EAGLE-3 have one)");
    // The ranges validate_config allows the base model.
    e.rms_eps = config_float(j, "rms_norm_eps", 1e-6f, 0.0f, 1.0f, "above 0 and below 1", where);
    e.rope_theta = config_float(j, "rope_theta", 10000.0f, 1.0f, INFINITY, "above 1, a float", where);
    bias = !j.contains("bias") || (j["bias"].is_boolean() && j["bias"].get<bool>());
    if (e.eagle3()) {
        bias = false;  // EAGLE-3's fc has none
        if (j.contains("target_hidden_size") && config_int(j, "target_hidden_size", where) != target.dim)
            throw FormatError(where + ": target_hidden_size " + json_excerpt(j["target_hidden_size"]) +
                              " is not the target model's hidden size " + std::to_string(target.dim));
        if (j.contains("vocab_size") && config_int(j, "vocab_size", where) != target.vocab_size)
            throw FormatError(where + ": vocab_size " + json_excerpt(j["vocab_size"]) +
                              " is not the target model's vocabulary of " + std::to_string(target.vocab_size));
        e.target_layers = eagle3_layers(j, where, target.n_layers);
        draft_vocab = j.contains("draft_vocab_size") ? config_int(j, "draft_vocab_size", where) : target.vocab_size;
        if (draft_vocab > target.vocab_size)
            throw FormatError(where + ": draft_vocab_size " + std::to_string(draft_vocab) +
                              " is larger than the target model's vocabulary of " + std::to_string(target.vocab_size));
    }
    if (e.dim != target.dim)
        throw FormatError(where + ": the EAGLE layer has hidden size " + std::to_string(e.dim) +
                          " but the target model has " + std::to_string(target.dim));
    if ((e.head_size == 0 && e.dim % e.n_heads != 0) || e.n_heads % e.n_kv_heads != 0)
        throw FormatError(where + ": hidden size " + std::to_string(e.dim) + " does not split into " +
                          std::to_string(e.n_heads) + " heads and " + std::to_string(e.n_kv_heads) + " kv heads");
    // Before the q/k rows are re-ordered, which needs them.
    if (e.head_dim() % 2 != 0 || e.head_dim() <= 0 || e.head_dim() > 1024)
        throw FormatError(where + ": heads of " + std::to_string(e.head_dim()) +
                          " are not an even size up to 1024 (RoPE rotates pairs)");
    // Llama 3's scaling as the draft's own config states it (its drafters carry the target's).
    LlamaConfig rope;
    rope.dim = e.dim;
    rope.n_heads = e.n_heads;
    rope.rope_theta = e.rope_theta;
    e.rope_freqs = parse_rope_scaling(j, rope, where);
    e.rope_position_scale = rope.rope_position_scale;
    return e;
}

// EAGLE-3's draft vocabulary: target id = draft id + d2t[draft id]; t2d marks the target ids the
// draft can emit. Without d2t, a draft vocabulary as large as the target's is the identity.
std::vector<int> draft_to_target(const SafetensorsFile& f, int64_t draft_vocab, int vocab) {
    const IndexTensor* d2t = f.find_index("d2t");
    std::vector<int> out(static_cast<size_t>(draft_vocab));
    if (!d2t) {
        if (draft_vocab != vocab) throw FormatError(f.path() + ": tensor 'd2t' is missing");
        for (int i = 0; i < vocab; ++i) out[size_t(i)] = i;
        return out;
    }
    if (d2t->shape != std::vector<int64_t>{draft_vocab})
        throw FormatError(f.path() + ": tensor 'd2t' has shape " + shape_text(d2t->shape) + ", expected [" +
                          std::to_string(draft_vocab) + "]");
    const std::vector<int64_t> offsets = d2t->values();
    for (size_t i = 0; i < out.size(); ++i) {
        const int64_t to = int64_t(i) + offsets[i];
        if (to < 0 || to >= vocab)
            throw FormatError(f.path() + ": d2t maps draft token " + std::to_string(i) + " to " + std::to_string(to) +
                              ", outside the target vocabulary (0 to " + std::to_string(vocab - 1) + ")");
        out[i] = int(to);
    }
    if (const IndexTensor* t2d = f.find_index("t2d")) {
        if (t2d->shape != std::vector<int64_t>{vocab})
            throw FormatError(f.path() + ": tensor 't2d' has shape " + shape_text(t2d->shape) + ", expected [" +
                              std::to_string(vocab) + "]");
        const std::vector<int64_t> marks = t2d->values();
        int64_t marked = 0;
        for (int64_t m : marks) marked += m != 0;
        bool covers = marked == draft_vocab;
        for (int to : out) covers = covers && marks[size_t(to)] != 0;
        if (!covers)
            throw FormatError(f.path() + ": t2d marks " + std::to_string(marked) +
                              " target tokens, which are not the " + std::to_string(draft_vocab) + " d2t maps to");
    }
    return out;
}

EagleLayer with_eagle3_weights(EagleLayer e, const SafetensorsFile& f, const LlamaConfig& target, int64_t draft_vocab) {
    const int64_t d = e.dim, kv = e.kv_dim(), h = e.hidden_dim, in = 2 * d, n = int64_t(e.target_layers.size());
    const int64_t q = e.q_dim();
    const std::string m = "midlayer.";
    e.applies_fc = n > 1;  // SafeAILab applies fc to a feature wider than the layer: one layer skips it
    if (e.fuses()) {
        const Tensor* fc = f.find("fc.weight");
        if (fc && fc->shape.size() == 2 && fc->shape[1] != n * d)
            throw FormatError(f.path() + ": fc.weight reads " + std::to_string(fc->shape[1]) + " columns, but " +
                              std::to_string(n) + " target layers of hidden size " + std::to_string(d) + " give " +
                              std::to_string(n * d));
        e.fc_w = read(f, "fc.weight", {d, n * d});
    }
    e.input_norm = read(f, m + "input_layernorm.weight", {d});
    e.hidden_norm = read(f, m + "hidden_norm.weight", {d});
    e.wq = permute(read(f, m + "self_attn.q_proj.weight", {q, in}), int(q), int(in), e.n_heads, false);
    e.wk = permute(read(f, m + "self_attn.k_proj.weight", {kv, in}), int(kv), int(in), e.n_kv_heads, false);
    e.wv = read(f, m + "self_attn.v_proj.weight", {kv, in});
    e.wo = read(f, m + "self_attn.o_proj.weight", {d, q});
    e.post_norm = read(f, m + "post_attention_layernorm.weight", {d});
    e.w_gate = read(f, m + "mlp.gate_proj.weight", {h, d});
    e.w_up = read(f, m + "mlp.up_proj.weight", {h, d});
    e.w_down = read(f, m + "mlp.down_proj.weight", {d, h});
    e.final_norm = read(f, "norm.weight", {d});
    e.draft_head = read(f, "lm_head.weight", {draft_vocab, d});
    e.draft_to_target = draft_to_target(f, draft_vocab, target.vocab_size);
    e.target_vocab = target.vocab_size;
    e.matrix_type = e.fuses() ? matrix_type_of(f, m, {"lm_head.weight", "fc.weight"}) : matrix_type_of(f, m, {"lm_head.weight"});
    e.check_fits(target);
    return e;
}

// The weights of the shape `e` states, from `f`.
EagleLayer with_weights(EagleLayer e, bool bias, const SafetensorsFile& f, const LlamaConfig& target,
                        int64_t draft_vocab) {
    e.source = f.path();
    if (e.eagle3()) return with_eagle3_weights(std::move(e), f, target, draft_vocab);
    const int64_t d = e.dim, kv = e.kv_dim(), h = e.hidden_dim, q = e.q_dim();
    e.fc_w = read(f, "fc.weight", {d, 2 * d});
    e.fc_b = bias ? read(f, "fc.bias", {d}) : std::vector<float>(size_t(d), 0.0f);
    e.wq = permute(read(f, kLayer + "self_attn.q_proj.weight", {q, d}), int(q), int(d), e.n_heads, false);
    e.wk = permute(read(f, kLayer + "self_attn.k_proj.weight", {kv, d}), int(kv), int(d), e.n_kv_heads, false);
    e.wv = read(f, kLayer + "self_attn.v_proj.weight", {kv, d});
    e.wo = read(f, kLayer + "self_attn.o_proj.weight", {d, q});
    e.w_gate = read(f, kLayer + "mlp.gate_proj.weight", {h, d});
    e.w_up = read(f, kLayer + "mlp.up_proj.weight", {h, d});
    e.w_down = read(f, kLayer + "mlp.down_proj.weight", {d, h});
    e.post_norm = read(f, kLayer + "post_attention_layernorm.weight", {d});
    e.matrix_type = matrix_type_of(f, kLayer, {"fc.weight"});
    e.check_fits(target);
    return e;
}

}  // namespace

EagleLayer load_eagle_layer(const std::string& path, const LlamaConfig& target) {
    if (!fs::is_directory(path) && fs::path(path).extension() == ".gguf") return load_eagle3_gguf(path, target);
    fs::path file = path;
    if (fs::is_directory(file))
        file = !fs::exists(file / kWeights) && fs::exists(file / kTorchWeights) ? file / kTorchWeights : file / kWeights;
    // Present but not a regular file (a FIFO, a folder) is reported by the readers below.
    if (!fs::exists(file)) throw FormatError(file.string() + ": no EAGLE layer file (model.safetensors or pytorch_model.bin)");
    const fs::path config_path = file.parent_path() / "config.json";
    if (!fs::exists(config_path))
        throw FormatError(config_path.string() + ": an EAGLE layer needs its config.json beside " + file.filename().string());
    // config.json first: its errors name what is wrong before the weights are read.
    bool bias = true;
    int64_t draft_vocab = 0;
    EagleLayer e = layer_of_config(read_text_file(config_path.string()), config_path.string(), target, bias, draft_vocab);
    // At most an EAGLE layer of this shape with an embedding beside it, as f32 (some published
    // checkpoints keep embed_tokens): a file of gigabytes more is refused by its size.
    const uint64_t d = uint64_t(e.dim), h = uint64_t(e.hidden_dim), v = uint64_t(target.vocab_size);
    // EAGLE-3: fc of three layers, q/k/v of 2d columns and a draft head as large as the vocabulary.
    const uint64_t most = (10 * d * d + 3 * d * h + 2 * v * d + 8 * d) * 4 + 9 * v + (uint64_t(64) << 20);
    if (file.extension() == ".bin") {  // PyTorch's state dict, through the restricted unpickler
        std::error_code ec;
        const uintmax_t size = fs::file_size(file, ec);
        if (!ec && size > most)
            throw FormatError(file.string() + ": " + std::to_string(size) + " bytes, more than an EAGLE layer of hidden size " +
                              std::to_string(d) + " holds (" + std::to_string(most) + ")");
        return with_weights(std::move(e), bias, open_torch_checkpoint(file.string()).as_safetensors(), target, draft_vocab);
    }
    return with_weights(std::move(e), bias, SafetensorsFile::open(file.string(), most), target, draft_vocab);
}

EagleLayer load_eagle_layer_from_parts(const SafetensorsFile& weights, const std::string& config_json,
                                       const std::string& config_name, const LlamaConfig& target) {
    bool bias = true;
    int64_t draft_vocab = 0;
    EagleLayer e = layer_of_config(config_json, config_name, target, bias, draft_vocab);
    return with_weights(std::move(e), bias, weights, target, draft_vocab);
}

namespace {

// EAGLE-3's published layout (SafeAILab's): fc over the fused layers, midlayer.*, its own norm and
// draft head, d2t as offsets and t2d as marks over the target vocabulary.
void save_eagle3_layer(const EagleLayer& e, const std::string& folder, const std::string& base_model) {
    const int64_t d = e.dim, kv = e.kv_dim(), h = e.hidden_dim, in = 2 * d, n = int64_t(e.target_layers.size());
    const int64_t q = e.q_dim();
    if (e.target_vocab < 1) throw std::invalid_argument("an EAGLE-3 layer to write needs its target vocabulary");
    const std::vector<float> wq = permute(e.wq, int(q), int(in), e.n_heads, true);
    const std::vector<float> wk = permute(e.wk, int(kv), int(in), e.n_kv_heads, true);
    std::vector<Tensor> tensors;
    auto add = [&](const std::string& name, const std::vector<float>& v, std::vector<int64_t> shape) {
        tensors.push_back(f32_tensor(name, v, std::move(shape)));
    };
    const std::string m = "midlayer.";
    if (e.fuses()) add("fc.weight", e.fc_w, {d, n * d});
    add(m + "input_layernorm.weight", e.input_norm, {d});
    add(m + "hidden_norm.weight", e.hidden_norm, {d});
    add(m + "self_attn.q_proj.weight", wq, {q, in});
    add(m + "self_attn.k_proj.weight", wk, {kv, in});
    add(m + "self_attn.v_proj.weight", e.wv, {kv, in});
    add(m + "self_attn.o_proj.weight", e.wo, {d, q});
    add(m + "post_attention_layernorm.weight", e.post_norm, {d});
    add(m + "mlp.gate_proj.weight", e.w_gate, {h, d});
    add(m + "mlp.up_proj.weight", e.w_up, {h, d});
    add(m + "mlp.down_proj.weight", e.w_down, {d, h});
    add("norm.weight", e.final_norm, {d});
    add("lm_head.weight", e.draft_head, {int64_t(e.draft_vocab()), d});
    std::vector<int64_t> d2t(e.draft_to_target.size());
    std::vector<uint8_t> t2d(size_t(e.target_vocab), 0);
    for (size_t i = 0; i < d2t.size(); ++i) {
        d2t[i] = int64_t(e.draft_to_target[i]) - int64_t(i);
        t2d.at(size_t(e.draft_to_target[i])) = 1;
    }
    const json config = {{"architectures", {"LlamaForCausalLMEagle3"}},
                         {"model_type", "llama"},
                         {"hidden_size", e.dim},
                         {"target_hidden_size", e.dim},
                         {"intermediate_size", e.hidden_dim},
                         {"num_attention_heads", e.n_heads},
                         {"num_key_value_heads", e.n_kv_heads},
                         {"head_dim", e.head_dim()},
                         {"num_hidden_layers", 1},
                         {"vocab_size", e.target_vocab},
                         {"draft_vocab_size", e.draft_vocab()},
                         {"rms_norm_eps", e.rms_eps},
                         {"rope_theta", e.rope_theta},
                         {"rope_scaling", nullptr},
                         {"max_position_embeddings", 2048},  // SafeAILab's RoPE cache grows past it
                         {"hidden_act", "silu"},
                         {"bias", false},
                         {"pretraining_tp", 1},
                         {"tie_word_embeddings", false},
                         {"torch_dtype", "float32"},
                         {"eagle_config", {{"eagle_aux_hidden_state_layer_ids", e.target_layers}}},
                         {"base_model_name_or_path", base_model}};
    const std::vector<uint8_t> weights =
        serialize_safetensors(tensors, {{"format", "pt"}}, {i64_tensor("d2t", d2t), bool_tensor("t2d", t2d)});
    const std::string config_text = json_text(config);
    const std::string_view weight_bytes(reinterpret_cast<const char*>(weights.data()), weights.size());
    write_files_atomically({{(fs::path(folder) / kWeights).string(), weight_bytes},
                            {(fs::path(folder) / "config.json").string(), config_text}});
}

}  // namespace

void save_eagle_layer(const EagleLayer& e, const std::string& folder, const std::string& base_model) {
    // Layers trained here rotate by rope_theta alone; a loaded layer's scaling would be lost.
    if (e.scales_rope())
        throw std::invalid_argument("writing an EAGLE layer with RoPE scaling is not supported");
    if (e.norms_feature())  // SafeAILab's layout has no norm before fc
        throw std::invalid_argument("writing an EAGLE-3 layer with a norm before fc is not supported");
    fs::create_directories(folder);
    if (e.eagle3()) return save_eagle3_layer(e, folder, base_model);
    const int64_t d = e.dim, kv = e.kv_dim(), h = e.hidden_dim, q = e.q_dim();
    const std::vector<float> wq = permute(e.wq, int(q), int(d), e.n_heads, true);
    const std::vector<float> wk = permute(e.wk, int(kv), int(d), e.n_kv_heads, true);
    std::vector<Tensor> tensors;
    auto add = [&](const std::string& name, const std::vector<float>& v, std::vector<int64_t> shape) {
        tensors.push_back(f32_tensor(name, v, std::move(shape)));
    };
    add("fc.weight", e.fc_w, {d, 2 * d});
    add("fc.bias", e.fc_b, {d});
    add(kLayer + "self_attn.q_proj.weight", wq, {q, d});
    add(kLayer + "self_attn.k_proj.weight", wk, {kv, d});
    add(kLayer + "self_attn.v_proj.weight", e.wv, {kv, d});
    add(kLayer + "self_attn.o_proj.weight", e.wo, {d, q});
    add(kLayer + "mlp.gate_proj.weight", e.w_gate, {h, d});
    add(kLayer + "mlp.up_proj.weight", e.w_up, {h, d});
    add(kLayer + "mlp.down_proj.weight", e.w_down, {d, h});
    add(kLayer + "post_attention_layernorm.weight", e.post_norm, {d});
    const json config = {{"architectures", {"LlamaForCausalLM"}},
                         {"model_type", "llama"},
                         {"hidden_size", e.dim},
                         {"intermediate_size", e.hidden_dim},
                         {"num_attention_heads", e.n_heads},
                         {"num_key_value_heads", e.n_kv_heads},
                         {"num_hidden_layers", 1},
                         {"rms_norm_eps", e.rms_eps},
                         {"rope_theta", e.rope_theta},
                         {"hidden_act", "silu"},
                         {"bias", true},
                         {"torch_dtype", "float32"},
                         {"base_model_name_or_path", base_model}};
    // One unit: new weights never sit beside the previous config.json.
    const std::vector<uint8_t> weights = serialize_safetensors(tensors, {{"format", "pt"}});
    const std::string config_text = json_text(config);
    const std::string_view weight_bytes(reinterpret_cast<const char*>(weights.data()), weights.size());
    write_files_atomically({{(fs::path(folder) / kWeights).string(), weight_bytes},
                            {(fs::path(folder) / "config.json").string(), config_text}});
}

}  // namespace medusa
