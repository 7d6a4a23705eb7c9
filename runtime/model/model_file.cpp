#include "model/model_file.h"

#include <algorithm>

#include "model/dequantize.h"

namespace medusa {

const char* format_name(ModelFormat f) {
    switch (f) {
        case ModelFormat::Llama2cV0: return "llama2c-v0";
        case ModelFormat::Llama2cV2: return "llama2c-v2";
        case ModelFormat::Gguf: return "gguf";
        case ModelFormat::Safetensors: return "safetensors";
        case ModelFormat::Synthetic: return "synthetic";
    }
    return "?";
}

const Tensor* ModelFile::find(const std::string& name) const {
    for (const auto& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

const Tensor& ModelFile::get(const std::string& name) const {
    if (const Tensor* t = find(name)) return *t;
    throw FormatError(path + ": tensor '" + name + "' is missing");
}

void validate_llama_tensors(const ModelFile& m) {
    const LlamaConfig& c = m.config;
    const int64_t dim = c.dim, hid = c.hidden_dim, kv = c.kv_dim(), vocab = c.vocab_size, q = c.q_dim();
    const int64_t pairs = rotated_dims(c) / 2;
    auto expect = [&](const std::string& name, const std::vector<int64_t>& shape) {
        const Tensor& t = m.get(name);
        if (t.shape != shape)
            throw FormatError(m.path + ": tensor '" + name + "' has shape " + shape_text(t.shape) + ", expected " +
                              shape_text(shape) + " from the model configuration");
    };
    expect("tok_embeddings", {vocab, dim});
    expect("norm", {dim});
    for (const char* factors : {"rope_freqs", "rope_factors_short", "rope_factors_long"})
        if (m.find(factors)) expect(factors, {pairs});
    if ((m.find("rope_factors_short") != nullptr) != (m.find("rope_factors_long") != nullptr))
        throw FormatError(m.path + ": tensor '" + std::string(m.find("rope_factors_short") ? "rope_factors_long" : "rope_factors_short") +
                          "' is missing (LongRoPE needs both the short and the long factors)");
    if (!c.tied_classifier) expect("output", {vocab, dim});
    for (int l = 0; l < c.n_layers; ++l) {
        const std::string p = "layers." + std::to_string(l) + ".";
        expect(p + "attention_norm", {dim});
        expect(p + "ffn_norm", {dim});
        expect(p + "wq", {q, dim});
        expect(p + "wk", {kv, dim});
        expect(p + "wv", {kv, dim});
        expect(p + "wo", {dim, q});
        expect(p + "w1", {hid, dim});
        expect(p + "w2", {dim, hid});
        expect(p + "w3", {hid, dim});
        if (c.qkv_bias) {
            expect(p + "bq", {q});
            expect(p + "bk", {kv});
            expect(p + "bv", {kv});
        }
        if (c.arch.qk_norm) {
            expect(p + "q_norm", {c.head_dim()});
            expect(p + "k_norm", {c.head_dim()});
        }
        if (c.arch.post_norms) {
            expect(p + "post_attention_norm", {dim});
            expect(p + "post_ffn_norm", {dim});
        }
        // The GPU fuses the gate and up projections into one matmul of one weight type.
        if (m.get(p + "w1").type != m.get(p + "w3").type)
            throw FormatError(m.path + ": layer " + std::to_string(l) + " stores its FFN gate and up matrices as " +
                              dtype_name(m.get(p + "w1").type) + " and " + dtype_name(m.get(p + "w3").type) +
                              ", which is not supported (the fused SwiGLU needs one type for both, as llama.cpp's "
                              "quantizer writes them)");
    }
}

std::vector<float> input_embeddings(const ModelFile& m) {
    std::vector<float> e = dequantize(m.get("tok_embeddings"));
    if (const float scale = m.config.arch.embedding_scale; scale != 1.0f)
        for (float& x : e) x *= scale;
    return e;
}

const Tensor* rope_factor_tensor(const ModelFile& m, int context) {
    if (const Tensor* t = m.find("rope_freqs")) return t;
    if (context <= 0) context = m.config.seq_len;
    const int original = m.config.arch.rope_original_context > 0 ? m.config.arch.rope_original_context : m.config.seq_len;
    return m.find(context > original ? "rope_factors_long" : "rope_factors_short");
}

}  // namespace medusa
