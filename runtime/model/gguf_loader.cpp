#include "model/gguf_loader.h"

#include <cmath>
#include <list>
#include <set>

#include "model/block_format.h"
#include "model/file_bytes.h"
#include "model/fused_tensors.h"
#include "model/gguf_metadata.h"
#include "model/gguf_vocab.h"
#include "model/rope_rows.h"

namespace medusa {

namespace {

// Bytes of a tensor of `n` elements, or throws for types this engine does not run.
uint64_t tensor_bytes(const std::string& file, const GgufTensorInfo& t, uint64_t n, DType& dtype) {
    const BlockFormat* f = gguf_format_by_id(t.type);
    if (!f)
        throw FormatError(file + ": tensor '" + t.name + "' has GGML type " + ggml_type_name(t.type) +
                          ", which is not supported (" + supported_gguf_types() + " are)");
    if (const std::string problem = split_block_problem(*f, int64_t(t.dims[0])); !problem.empty())
        throw FormatError(file + ": tensor '" + t.name + "' " + problem);
    dtype = f->type;
    return n / uint64_t(f->values) * uint64_t(f->bytes);
}

// The file's bytes, and the copies of tensors whose rows the loader reordered.
struct GgufStorage {
    std::shared_ptr<const std::vector<uint8_t>> bytes;
    std::list<std::vector<uint8_t>> owned;  // a list: its buffers never move
};

// GGUF tensor names and their canonical names (model_file.h): the model-wide ones, then the
// per-layer ones after "blk.N." / "layers.N.".
const std::vector<std::pair<std::string, std::string>>& top_level_names() {
    static const std::vector<std::pair<std::string, std::string>> v = {
        {"token_embd.weight", "tok_embeddings"}, {"output_norm.weight", "norm"}, {"output.weight", "output"},
        {"rope_freqs.weight", "rope_freqs"}, {"rope_factors_short.weight", "rope_factors_short"},
        {"rope_factors_long.weight", "rope_factors_long"}};
    return v;
}
const std::vector<std::pair<std::string, std::string>>& per_layer_names() {
    static const std::vector<std::pair<std::string, std::string>> v = {
        {"attn_norm.weight", "attention_norm"}, {"attn_q.weight", "wq"},       {"attn_k.weight", "wk"},
        {"attn_v.weight", "wv"},                {"attn_output.weight", "wo"},  {"ffn_norm.weight", "ffn_norm"},
        {"ffn_gate.weight", "w1"},              {"ffn_down.weight", "w2"},     {"ffn_up.weight", "w3"},
        {"attn_q.bias", "bq"},                  {"attn_k.bias", "bk"},         {"attn_v.bias", "bv"},
        {"attn_qkv.weight", "wqkv"},            {"attn_q_norm.weight", "q_norm"}, {"attn_k_norm.weight", "k_norm"},
        {"post_attention_norm.weight", "post_attention_norm"}, {"post_ffw_norm.weight", "post_ffn_norm"}};
    return v;
}

// A GGUF name's canonical name (to_canonical) or a canonical name's GGUF name; "" when none.
std::string translate_name(const std::string& name, bool to_canonical) {
    auto side = [](const std::pair<std::string, std::string>& p, bool canonical) -> const std::string& {
        return canonical ? p.second : p.first;
    };
    for (const auto& p : top_level_names())
        if (side(p, !to_canonical) == name) return side(p, to_canonical);
    const std::string from_prefix = to_canonical ? "blk." : "layers.", to_prefix = to_canonical ? "layers." : "blk.";
    if (name.rfind(from_prefix, 0) != 0) return "";
    const size_t dot = name.find('.', from_prefix.size());
    if (dot == std::string::npos) return "";
    const std::string layer = name.substr(from_prefix.size(), dot - from_prefix.size()), rest = name.substr(dot + 1);
    for (const auto& p : per_layer_names())
        if (side(p, !to_canonical) == rest) return to_prefix + layer + "." + side(p, to_canonical);
    return "";
}

}  // namespace

std::string gguf_canonical_name(const std::string& g) { return translate_name(g, true); }
std::string gguf_tensor_name(const std::string& canonical) { return translate_name(canonical, false); }

Tensor gguf_tensor(const GgufHeader& header, const std::vector<uint8_t>& bytes, const GgufTensorInfo& info,
                   const std::string& file) {
    if (header.data_start > bytes.size()) throw FormatError(file + ": the file changed while it was read");
    const uint64_t data_size = bytes.size() - header.data_start;
    uint64_t n = 1;
    for (uint64_t d : info.dims) {
        if (n > (1ull << 40) / d) throw FormatError(file + ": tensor '" + info.name + "' is absurdly large");
        n *= d;
    }
    Tensor t;
    t.name = info.name;
    const uint64_t nbytes = tensor_bytes(file, info, n, t.type);
    if (info.offset > data_size || nbytes > data_size - info.offset)
        throw FormatError(file + ": tensor '" + info.name + "' data [offset " +
                          std::to_string(header.data_start + info.offset) + ", " + std::to_string(nbytes) +
                          " bytes] lies outside the file (size " + std::to_string(bytes.size()) + ")");
    t.group_size = gguf_format(t.type)->values > 1 ? gguf_format(t.type)->values : 0;
    for (auto it = info.dims.rbegin(); it != info.dims.rend(); ++it) t.shape.push_back(int64_t(*it));
    t.data = bytes.data() + header.data_start + info.offset;
    t.nbytes = size_t(nbytes);
    return t;
}

ModelFile load_gguf(std::shared_ptr<const std::vector<uint8_t>> bytes, const std::string& name) {
    GgufHeader header = read_gguf_header(*bytes, name);
    return load_gguf(std::move(bytes), name, std::move(header));
}

namespace {

// Variants of the families that share their names with nothing here, refused by name.
void refuse_unsupported_architecture(const std::string& arch, const std::string& name) {
    std::string what;
    if (arch.find("moe") != std::string::npos) what = " (a mixture of experts)";
    else if (arch == "gemma3n") what = " (Gemma 3n: per-layer embeddings and AltUp)";
    else if (arch == "gemma2") what = " (Gemma 2: logit soft-capping)";
    else if (arch == "clip" || arch == "mllama") what = " (a vision tower, not a language model)";
    throw FormatError(name + ": architecture '" + arch + "'" + what + " is not supported (" + supported_families() +
                      " are)");
}

// The family's features that the file's hyper-parameters set: head size, partial and scaled RoPE,
// sliding windows, the embedding scale.
void read_features(const GgufMetadata& meta, const FamilyTraits& family, LlamaConfig& c, const std::string& name) {
    const std::string k = std::string(family.gguf_arch) + ".";
    ArchitectureFeatures& a = c.arch;
    a = features_of(family);
    // key_length, when present, is the head size (Qwen3, Gemma 3: not dim / heads).
    if (meta.has(k + "attention.key_length")) {
        c.head_size = meta.integer(k + "attention.key_length", 0, true);
        if (meta.integer(k + "attention.value_length", c.head_size, false) != c.head_size)
            throw FormatError(name + ": " + k + "attention.value_length differs from key_length (heads whose values "
                              "and keys differ in size are not supported)");
        if (c.head_size <= 0 || c.head_size > 1024)
            throw FormatError(name + ": " + k + "attention.key_length = " + std::to_string(c.head_size) +
                              " is not a head size (1..1024)");
    }
    const int head = c.head_size > 0 ? c.head_size : (c.n_heads > 0 ? c.dim / c.n_heads : 0);
    const int rotated = meta.integer(k + "rope.dimension_count", head, false);
    if (head > 0 && rotated != head) {  // (a head of 0 is validate_config's to name)
        if (!family.partial_rope)
            throw FormatError(name + ": " + k + "rope.dimension_count " + std::to_string(rotated) +
                              " differs from the head size " + std::to_string(head) + " (partial RoPE is not part of " +
                              family.gguf_arch + ")");
        a.rope_dims = rotated;
    }
    if (family.scaled_embedding) a.embedding_scale = std::sqrt(float(c.dim));
    // Gemma 3 27B scales queries by 1 / sqrt(dim / heads), the others by 1 / sqrt(head size) (llama.cpp
    // and gemma_pytorch tell them apart by their 62 layers).
    if (family.family == ModelFamily::Gemma3 && c.n_layers == 62 && c.n_heads > 0)
        a.attention_scale = 1.0f / std::sqrt(float(c.dim / c.n_heads));
    for (const char* cap : {"final_logit_softcapping", "attn_logit_softcapping"})
        if (meta.real(k + cap, 0.0) != 0.0f)
            throw FormatError(name + ": " + k + cap + " is set: logit soft-capping (Gemma 2's) is not supported");
    if (family.sliding_window) {
        a.sliding_window = meta.integer(k + "attention.sliding_window", 0, false);
        if (a.sliding_window < 0)
            throw FormatError(name + ": " + k + "attention.sliding_window is negative");
        if (a.sliding_window > 0) {
            const std::string key = k + "attention.sliding_window_pattern";
            if (meta.is_array(key)) {
                const GgufValue* v = meta.array(key, BOOL);
                if (v->numbers.size() != size_t(c.n_layers))
                    throw FormatError(name + ": " + key + " has " + std::to_string(v->numbers.size()) +
                                      " entries for " + std::to_string(c.n_layers) + " layers");
                for (double x : v->numbers) a.local_layers.push_back(x != 0 ? 1 : 0);
            } else {
                const int pattern = meta.integer(key, family.default_window_pattern, false);
                if (pattern < 0) throw FormatError(name + ": " + key + " is negative");
                a.local_layers = local_layer_pattern(c.n_layers, pattern);
            }
            a.local_rope_theta = meta.real(k + "rope.freq_base_swa", 10000.0);
        }
    }
    if (family.long_rope) {
        a.rope_attn_factor = meta.real(k + "rope.scaling.attn_factor", 1.0);
        a.rope_original_context = meta.integer(k + "rope.scaling.original_context_length", 0, false);
    }
}

}  // namespace

ModelFile load_gguf(std::shared_ptr<const std::vector<uint8_t>> bytes, const std::string& name, GgufHeader header) {
    ModelFile m;
    m.path = name;
    m.format = ModelFormat::Gguf;
    const GgufMetadata& meta = header.meta;
    const std::string arch = meta.text("general.architecture");
    const FamilyTraits* family = family_by_gguf_arch(arch);
    if (!family) refuse_unsupported_architecture(arch, name);
    const std::string k = arch + ".";
    if (meta.integer(k + "expert_count", 0, false) > 0)
        throw FormatError(name + ": mixture-of-experts models are not supported (dense ones are)");
    LlamaConfig& c = m.config;
    c.dim = meta.integer(k + "embedding_length", 0, true);
    c.hidden_dim = meta.integer(k + "feed_forward_length", 0, true);
    c.n_layers = meta.integer(k + "block_count", 0, true);
    c.n_heads = meta.integer(k + "attention.head_count", 0, true);
    c.n_kv_heads = meta.integer(k + "attention.head_count_kv", c.n_heads, false);
    c.seq_len = meta.integer(k + "context_length", 2048, false);
    c.rope_theta = meta.real(k + "rope.freq_base", 10000.0);
    c.rms_eps = meta.real(k + "attention.layer_norm_rms_epsilon", 1e-5);
    c.qkv_bias = family->qkv_bias;
    // Llama 3's scaling comes as the rope_freqs tensor, LongRoPE's as rope_factors_short/_long;
    // of the scaling keys, "linear" is run here.
    const std::string scaling = meta.text(k + "rope.scaling.type");
    if (scaling == "linear") c.rope_position_scale = meta.real(k + "rope.scaling.factor", 1.0);
    else if (!scaling.empty() && scaling != "none" && !(scaling == "longrope" && family->long_rope))
        throw FormatError(name + ": RoPE scaling '" + scaling + "' is not supported (none, linear, Llama 3's rope_freqs" +
                          (family->long_rope ? " and longrope" : "") + " are)");
    read_features(meta, *family, c, name);
    for (const auto& info : header.tensors) {
        const std::string canon = gguf_canonical_name(info.name);
        if (canon.empty() && info.name.size() > 5 && info.name.compare(info.name.size() - 5, 5, ".bias") == 0)
            throw FormatError(name + ": tensor '" + info.name +
                              "' is a bias this engine does not apply (it applies those of attn_q, attn_k and attn_v): "
                              "refused rather than decoded without it");
        if (canon.empty()) continue;
        Tensor t = gguf_tensor(header, *bytes, info, name);
        t.name = canon;
        m.tensors.push_back(std::move(t));
    }
    const Tensor* emb = m.find("tok_embeddings");
    if (!emb) throw FormatError(name + ": tensor 'token_embd.weight' is missing");
    if (emb->shape.size() != 2 || emb->shape[0] > (1 << 22))
        throw FormatError(name + ": tensor 'token_embd.weight' is not a {vocab, dim} matrix of a sane size");
    c.vocab_size = int(emb->shape[0]);
    c.tied_classifier = m.find("output") == nullptr;  // convert-llama2c-to-ggml writes a copy: untied
    // llama files may carry q/k/v biases too (llama.cpp applies them when present): then every
    // layer must have all three, which validate_llama_tensors checks.
    if (m.find("layers.0.bq") || m.find("layers.0.bk") || m.find("layers.0.bv")) c.qkv_bias = true;
    validate_config(c, name);
    // Phi-3 stores gate|up as one ffn_up of twice the rows, and no ffn_gate.
    if (family->fused_gate_up)
        for (Tensor& t : m.tensors)
            if (t.name.rfind("layers.", 0) == 0 && t.name.size() > 3 && t.name.compare(t.name.size() - 3, 3, ".w3") == 0 &&
                !m.find(t.name.substr(0, t.name.size() - 2) + "w1"))
                t.name.replace(t.name.size() - 2, 2, "w13");
    split_fused_tensors(m);
    validate_llama_tensors(m);
    auto storage = std::make_shared<GgufStorage>();
    storage->bytes = bytes;
    if (family->gguf_pairing == RopePairing::RotateHalf) reorder_rotate_half_rows(m, storage->owned);
    if (meta.has("tokenizer.ggml.tokens")) {
        m.embedded_tokenizer = read_gguf_vocab(meta, name);
        const size_t n_tokens = meta.array("tokenizer.ggml.tokens", STRING)->texts.size();
        if (n_tokens != size_t(c.vocab_size))
            throw FormatError(name + ": the embedded vocabulary has " + std::to_string(n_tokens) +
                              " tokens but the model's embedding has " + std::to_string(c.vocab_size) + " rows");
    }
    // Kept verbatim; model/chat_template.cpp recognises the families it knows by their markers.
    m.chat_template = meta.text("tokenizer.chat_template");
    m.storage = storage;
    return m;
}

}  // namespace medusa
