#include "train/backbone_weights.h"

#include <stdexcept>

#include "model/atomic_file.h"
#include "model/dequantize.h"

namespace medusa::train {

BackboneWeights BackboneWeights::from_model(const ModelFile& m) {
    const LlamaConfig& c = m.config;
    const ArchitectureFeatures& a = c.arch;
    const bool plain_llama = a.family == ModelFamily::Llama && c.head_size == 0 && !a.qk_norm && !a.post_norms &&
                             a.activation == GateActivation::Silu && a.embedding_scale == 1.0f && a.rope_dims == 0 &&
                             a.rope_attn_factor == 1.0f && a.sliding_window == 0;
    if (!plain_llama)
        throw std::invalid_argument(m.path + ": Medusa-2 training supports Llama models; this is " + family_name(a.family) +
                                    " (" + describe_features(c) + "): train Medusa-1 heads (--objective heads) or an "
                                    "EAGLE layer (--objective eagle|eagle3) for it");
    if (c.qkv_bias || m.find("rope_freqs") || c.rope_position_scale != 1.0f)
        throw std::invalid_argument(m.path + ": Medusa-2 training supports Llama models without q/k/v biases or "
                                             "RoPE scaling");
    BackboneWeights w;
    w.config = c;
    w.tok_embeddings = dequantize(m.get("tok_embeddings"));
    w.norm = dequantize(m.get("norm"));
    if (!c.tied_classifier) w.output = dequantize(m.get("output"));
    for (int l = 0; l < c.n_layers; ++l) {
        auto get = [&](const char* n) { return dequantize(m.get("layers." + std::to_string(l) + "." + n)); };
        w.layers.push_back({get("attention_norm"), get("wq"), get("wk"), get("wv"), get("wo"), get("ffn_norm"),
                            get("w1"), get("w2"), get("w3")});
    }
    return w;
}

void write_llama2c(const BackboneWeights& w, const std::string& path) {
    const LlamaConfig& c = w.config;
    AtomicFileWriter out(path);  // a killed or failed write leaves no half model behind
    const int32_t header[7] = {c.dim,        c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads,
                               w.output.empty() ? c.vocab_size : -c.vocab_size, c.seq_len};
    out.write({reinterpret_cast<const char*>(header), sizeof header});
    auto put = [&](const std::vector<float>& v) { out.write({reinterpret_cast<const char*>(v.data()), v.size() * 4}); };
    put(w.tok_embeddings);
    // run.c's order: each kind of tensor for all layers, then the next kind.
    using L = BackboneWeights::Layer;
    for (auto field : {&L::attention_norm, &L::wq, &L::wk, &L::wv, &L::wo, &L::ffn_norm, &L::w1, &L::w2, &L::w3})
        for (const L& layer : w.layers) put(layer.*field);
    put(w.norm);
    put(std::vector<float>(size_t(c.seq_len) * c.head_dim(), 0.0f));  // freq_cis real + imag halves, unread
    if (!w.output.empty()) put(w.output);
    out.commit();
}

}  // namespace medusa::train
