#include "model/model_file.h"

#include <algorithm>

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
    const int64_t dim = c.dim, hid = c.hidden_dim, kv = c.kv_dim(), vocab = c.vocab_size;
    auto expect = [&](const std::string& name, const std::vector<int64_t>& shape) {
        const Tensor& t = m.get(name);
        if (t.shape != shape)
            throw FormatError(m.path + ": tensor '" + name + "' has shape " + shape_text(t.shape) + ", expected " +
                              shape_text(shape) + " from the model configuration");
    };
    expect("tok_embeddings", {vocab, dim});
    expect("norm", {dim});
    if (m.find("rope_freqs")) expect("rope_freqs", {c.head_dim() / 2});
    if (!c.tied_classifier) expect("output", {vocab, dim});
    for (int l = 0; l < c.n_layers; ++l) {
        const std::string p = "layers." + std::to_string(l) + ".";
        expect(p + "attention_norm", {dim});
        expect(p + "ffn_norm", {dim});
        expect(p + "wq", {dim, dim});
        expect(p + "wk", {kv, dim});
        expect(p + "wv", {kv, dim});
        expect(p + "wo", {dim, dim});
        expect(p + "w1", {hid, dim});
        expect(p + "w2", {dim, hid});
        expect(p + "w3", {hid, dim});
        if (c.qkv_bias) {
            expect(p + "bq", {dim});
            expect(p + "bk", {kv});
            expect(p + "bv", {kv});
        }
        // The GPU fuses the gate and up projections into one matmul of one weight type.
        if (m.get(p + "w1").type != m.get(p + "w3").type)
            throw FormatError(m.path + ": layer " + std::to_string(l) + " stores its FFN gate and up matrices as " +
                              dtype_name(m.get(p + "w1").type) + " and " + dtype_name(m.get(p + "w3").type) +
                              ", which is not supported (the fused SwiGLU needs one type for both, as llama.cpp's "
                              "quantizer writes them)");
    }
}

}  // namespace medusa
