#include "model/architecture.h"

#include <cmath>
#include <sstream>

#include "model/format_error.h"
#include "model/model_file.h"

namespace medusa {

const std::vector<FamilyTraits>& families() {
    using enum ModelFamily;
    using enum GateActivation;
    using enum RopePairing;
    using enum NormGain;
    // family  gguf    hf type       hf class               pairing     bias   qk     post   gate      scale  hf gain        window pat longrope partial fqkv   fgu
    static const std::vector<FamilyTraits> table = {
        {Llama, "llama", "llama", "LlamaForCausalLM", Adjacent, false, false, false, Silu, false, AsStored, false, 0, false, false, false, false},
        {Qwen2, "qwen2", "qwen2", "Qwen2ForCausalLM", RotateHalf, true, false, false, Silu, false, AsStored, false, 0, false, false, false, false},
        {Qwen3, "qwen3", "qwen3", "Qwen3ForCausalLM", RotateHalf, false, true, false, Silu, false, AsStored, false, 0, false, false, false, false},
        {Gemma3, "gemma3", "gemma3_text", "Gemma3ForCausalLM", RotateHalf, false, true, true, GeluTanh, true, OnePlusStored, true, 6, false, false, false, false},
        {Phi3, "phi3", "phi3", "Phi3ForCausalLM", RotateHalf, false, false, false, Silu, false, AsStored, false, 0, true, true, true, true},
    };
    return table;
}

const FamilyTraits& family_traits(ModelFamily f) {
    for (const auto& t : families())
        if (t.family == f) return t;
    return families().front();
}

const FamilyTraits* family_by_gguf_arch(std::string_view arch) {
    for (const auto& t : families())
        if (arch == t.gguf_arch) return &t;
    return nullptr;
}

const FamilyTraits* family_by_hf_model_type(std::string_view model_type) {
    for (const auto& t : families())
        if (model_type == t.hf_model_type) return &t;
    return nullptr;
}

std::string supported_families() {
    std::string out;
    const auto& all = families();
    for (size_t i = 0; i < all.size(); ++i)
        out += std::string(i == 0 ? "" : i + 1 == all.size() ? " and " : ", ") + all[i].gguf_arch;
    return out;
}

const char* family_name(ModelFamily f) { return family_traits(f).gguf_arch; }

const char* activation_name(GateActivation a) { return a == GateActivation::Silu ? "SwiGLU" : "GeGLU (tanh)"; }

ArchitectureFeatures features_of(const FamilyTraits& f) {
    ArchitectureFeatures a;
    a.family = f.family;
    a.qk_norm = f.qk_norm;
    a.post_norms = f.post_norms;
    a.activation = f.activation;
    return a;
}

std::vector<uint8_t> local_layer_pattern(int n_layers, int pattern) {
    std::vector<uint8_t> local(size_t(std::max(n_layers, 0)));
    for (int l = 0; l < n_layers; ++l) local[l] = pattern == 0 || l % pattern < pattern - 1;
    return local;
}

LayerAttention layer_attention(const LlamaConfig& c, int layer) {
    const auto& a = c.arch;
    if (a.sliding_window > 0 && layer >= 0 && size_t(layer) < a.local_layers.size() && a.local_layers[layer])
        return {a.sliding_window, a.local_rope_theta, 1.0f};
    return {0, c.rope_theta, c.rope_position_scale};
}

int rotated_dims(const LlamaConfig& c) { return c.arch.rope_dims > 0 ? c.arch.rope_dims : c.head_dim(); }

float attention_scale(const LlamaConfig& c) {
    return c.arch.attention_scale > 0 ? c.arch.attention_scale : 1.0f / std::sqrt(float(c.head_dim()));
}

void validate_config(const LlamaConfig& c, const std::string& name) {
    auto bad = [&](const std::string& what) { throw FormatError(name + ": invalid model configuration: " + what); };
    auto in_range = [&](int v, int lo, int hi, const char* what) {
        if (v < lo || v > hi)
            bad(std::string(what) + " = " + std::to_string(v) + " (expected " + std::to_string(lo) + ".." +
                std::to_string(hi) + ")");
    };
    in_range(c.dim, 1, 65536, "dim");
    in_range(c.hidden_dim, 1, 262144, "hidden_dim");
    in_range(c.n_layers, 1, 1024, "n_layers");
    in_range(c.n_heads, 1, 1024, "n_heads");
    in_range(c.n_kv_heads, 1, c.n_heads, "n_kv_heads");
    in_range(c.vocab_size, 1, 1 << 22, "vocab_size");
    in_range(c.seq_len, 1, 1 << 20, "context length");
    in_range(c.head_size, 0, 1024, "head size");
    if (c.head_size == 0 && c.dim % c.n_heads) bad("dim " + std::to_string(c.dim) + " is not a multiple of n_heads");
    if (int64_t(c.head_dim()) * c.n_heads > 65536) bad("heads x head size is over 65536");
    if (c.n_heads % c.n_kv_heads) bad("n_heads is not a multiple of n_kv_heads");
    if (c.head_dim() % 2) bad("the head size must be even for RoPE");
    if (!(c.rms_eps > 0 && c.rms_eps < 1)) bad("rms epsilon out of range");
    if (!(c.rope_theta > 1)) bad("rope theta out of range");
    if (!(c.rope_position_scale >= 1 && c.rope_position_scale <= 1024)) bad("rope scaling factor out of range");
    const ArchitectureFeatures& a = c.arch;
    if (a.rope_dims < 0 || a.rope_dims > c.head_dim() || a.rope_dims % 2)
        bad("the rotated dimensions (" + std::to_string(a.rope_dims) + ") must be even and at most the head size " +
            std::to_string(c.head_dim()));
    if (!(a.embedding_scale > 0 && a.embedding_scale < 1e4)) bad("embedding scale out of range");
    if (!(a.attention_scale >= 0 && a.attention_scale < 1e3)) bad("attention scale out of range");
    if (!(a.rope_attn_factor > 0 && a.rope_attn_factor <= 100)) bad("RoPE attention factor out of range");
    if (a.rope_original_context < 0) bad("RoPE original context out of range");
    if (a.sliding_window < 0 || a.sliding_window > c.seq_len)
        bad("sliding window " + std::to_string(a.sliding_window) + " is larger than the context length " +
            std::to_string(c.seq_len));
    if (a.sliding_window > 0 && a.local_layers.size() != size_t(c.n_layers))
        bad("the local:global layer pattern names " + std::to_string(a.local_layers.size()) + " layers, not " +
            std::to_string(c.n_layers));
    if (!(a.local_rope_theta > 1)) bad("local layers' rope theta out of range");
}

std::string describe_features(const LlamaConfig& c) {
    const ArchitectureFeatures& a = c.arch;
    std::ostringstream o;
    auto item = [&, first = true](const std::string& s) mutable {
        o << (first ? "" : ", ") << s;
        first = false;
    };
    if (c.head_size > 0 && c.head_size * c.n_heads != c.dim) item("head size " + std::to_string(c.head_size));
    if (c.qkv_bias) item("q/k/v biases");
    if (a.qk_norm) item("q/k norms");
    if (a.post_norms) item("post-norms");
    item(activation_name(a.activation));
    if (a.embedding_scale != 1.0f) {
        std::ostringstream s;
        s << "embeddings x " << a.embedding_scale;
        item(s.str());
    }
    if (a.rope_dims > 0 && a.rope_dims < c.head_dim())
        item("RoPE on " + std::to_string(a.rope_dims) + " of " + std::to_string(c.head_dim()) + " dimensions");
    if (a.rope_original_context > 0) {
        std::ostringstream s;
        s << "LongRoPE (long factors above " << a.rope_original_context << " positions, attention factor "
          << a.rope_attn_factor << ")";
        item(s.str());
    }
    if (a.sliding_window > 0) {
        int local = 0;
        for (uint8_t l : a.local_layers) local += l;
        std::ostringstream s;
        s << local << " of " << c.n_layers << " layers local (window " << a.sliding_window << ", RoPE base "
          << a.local_rope_theta << ")";
        item(s.str());
    }
    return o.str();
}

}  // namespace medusa
