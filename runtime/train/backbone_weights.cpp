#include "train/backbone_weights.h"

#include <filesystem>
#include <stdexcept>

#include "model/atomic_file.h"
#include "model/dequantize.h"
#include "model/gguf_writer.h"

namespace medusa::train {

namespace fs = std::filesystem;

BackboneWeights BackboneWeights::from_model(const ModelFile& m, int context) {
    const LlamaConfig& c = m.config;
    BackboneWeights w;
    w.config = c;
    w.tok_embeddings = dequantize(m.get("tok_embeddings"));
    w.norm = dequantize(m.get("norm"));
    if (!c.tied_classifier) w.output = dequantize(m.get("output"));
    for (int l = 0; l < c.n_layers; ++l) {
        auto get = [&](const char* n) { return dequantize(m.get("layers." + std::to_string(l) + "." + n)); };
        Layer& L = w.layers.emplace_back(Layer{get("attention_norm"), get("wq"), get("wk"), get("wv"), get("wo"),
                                               get("ffn_norm"), get("w1"), get("w2"), get("w3")});
        if (c.qkv_bias) L.bq = get("bq"), L.bk = get("bk"), L.bv = get("bv");
        if (c.arch.qk_norm) L.q_norm = get("q_norm"), L.k_norm = get("k_norm");
        if (c.arch.post_norms) L.post_attention_norm = get("post_attention_norm"), L.post_ffn_norm = get("post_ffn_norm");
    }
    if (const Tensor* f = rope_factor_tensor(m, context > 0 ? context : c.seq_len)) w.rope_factors = dequantize(*f);
    for (const char* name : {"rope_freqs", "rope_factors_short", "rope_factors_long"})
        if (const Tensor* t = m.find(name)) w.rope_tables.emplace_back(name, dequantize(*t));
    if (!w.rope_factors.empty() && w.rope_factors.size() * 2 < size_t(rotated_dims(c)))
        throw FormatError(m.path + ": the RoPE factor table holds " + std::to_string(w.rope_factors.size()) +
                          " values for " + std::to_string(rotated_dims(c) / 2) + " rotated pairs");
    return w;
}

bool llama2c_holds(const BackboneWeights& w) {
    const LlamaConfig& c = w.config;
    const ArchitectureFeatures& a = c.arch;
    return a.family == ModelFamily::Llama && (c.head_size == 0 || c.head_size * c.n_heads == c.dim) && !a.qk_norm &&
           !a.post_norms && a.activation == GateActivation::Silu && a.embedding_scale == 1.0f &&
           a.attention_scale == 0.0f && rotated_dims(c) == c.head_dim() && a.rope_attn_factor == 1.0f &&
           a.sliding_window == 0 && !c.qkv_bias && c.rope_theta == 10000.0f && c.rms_eps == 1e-5f &&
           c.rope_position_scale == 1.0f && w.rope_tables.empty();
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

ModelFile backbone_model_file(const BackboneWeights& w, const std::string& path) {
    const LlamaConfig& c = w.config;
    ModelFile m;
    m.path = path;
    m.format = ModelFormat::Gguf;
    m.config = c;
    auto add = [&](const std::string& name, const std::vector<float>& v, std::vector<int64_t> shape = {}) {
        m.tensors.push_back(f32_tensor(name, v, std::move(shape)));
    };
    const int64_t D = c.dim, Q = c.q_dim(), KV = c.kv_dim(), H = c.hidden_dim;
    add("tok_embeddings", w.tok_embeddings, {c.vocab_size, D});
    for (const auto& [name, v] : w.rope_tables) add(name, v);
    for (int l = 0; l < c.n_layers; ++l) {
        const BackboneWeights::Layer& L = w.layers[l];
        const std::string p = "layers." + std::to_string(l) + ".";
        add(p + "attention_norm", L.attention_norm);
        add(p + "wq", L.wq, {Q, D});
        add(p + "wk", L.wk, {KV, D});
        add(p + "wv", L.wv, {KV, D});
        if (c.qkv_bias) add(p + "bq", L.bq), add(p + "bk", L.bk), add(p + "bv", L.bv);
        if (c.arch.qk_norm) add(p + "q_norm", L.q_norm), add(p + "k_norm", L.k_norm);
        add(p + "wo", L.wo, {D, Q});
        if (c.arch.post_norms) add(p + "post_attention_norm", L.post_attention_norm);
        add(p + "ffn_norm", L.ffn_norm);
        add(p + "w1", L.w1, {H, D});
        add(p + "w2", L.w2, {D, H});
        add(p + "w3", L.w3, {H, D});
        if (c.arch.post_norms) add(p + "post_ffn_norm", L.post_ffn_norm);
    }
    add("norm", w.norm);
    if (!w.output.empty()) add("output", w.output, {c.vocab_size, D});
    validate_llama_tensors(m);
    return m;
}

std::string vocabulary_gguf(const ModelFile& model, const std::string& tokenizer_flag) {
    auto holds_vocabulary = [](const std::string& path) {
        try {
            return read_gguf_vocabulary_keys(path).tokens > 0;
        } catch (const FormatError&) {
            return false;  // not a GGUF file: a sentencepiece .model, a tokenizer.json, a folder
        }
    };
    if (!tokenizer_flag.empty()) return fs::is_regular_file(tokenizer_flag) && holds_vocabulary(tokenizer_flag) ? tokenizer_flag : "";
    if (model.format == ModelFormat::Gguf && fs::is_regular_file(model.path) && holds_vocabulary(model.path))
        return model.path;
    return "";
}

void check_tuned_model_writable(const BackboneWeights& base, const TunedVocabulary& vocab) {
    if (llama2c_holds(base) || !vocab.gguf.empty()) return;
    if (!vocab.tokenizer)
        throw std::invalid_argument("the tuned model is written as GGUF, which needs a vocabulary: give --tokenizer");
    if (vocab.tokenizer->byte_level())
        throw std::invalid_argument(vocab.tokenizer->source() +
                                    ": the tuned model is written as GGUF, whose byte-level BPE vocabulary is carried "
                                    "through from a GGUF file only: run from the model's GGUF conversion, or give "
                                    "--tokenizer a GGUF file that holds the vocabulary");
}

std::string write_tuned_model(const BackboneWeights& merged, const ModelFile& source, const TunedVocabulary& vocab,
                              const std::string& dir) {
    if (llama2c_holds(merged)) {
        const std::string path = (fs::path(dir) / "model.bin").string();
        write_llama2c(merged, path);
        return path;
    }
    check_tuned_model_writable(merged, vocab);
    const std::string path = (fs::path(dir) / "model.gguf").string();
    // Named after the source, as `medusa export-gguf` names its files (general.name).
    const ModelFile m = backbone_model_file(merged, source.path);
    if (!vocab.gguf.empty()) write_gguf(m, read_gguf_vocabulary_keys(vocab.gguf), path);
    else write_gguf(m, *vocab.tokenizer, path);
    return path;
}

}  // namespace medusa::train
