// One in-memory description of a decoder model (Llama and the families model/architecture.h
// lists), whatever file it came from.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/architecture.h"
#include "model/bpe_vocab.h"
#include "model/format_error.h"
#include "model/tensor.h"

namespace medusa {

struct LlamaConfig {
    int dim = 0;
    int hidden_dim = 0;
    int n_layers = 0;
    int n_heads = 0;
    int n_kv_heads = 0;
    int vocab_size = 0;
    int seq_len = 0;  // context length
    float rope_theta = 10000.0f;
    float rms_eps = 1e-5f;
    bool tied_classifier = true;  // true: "output" is absent and tok_embeddings is the classifier
    bool qkv_bias = false;        // Qwen2: the q, k and v projections add a bias (bq, bk, bv)
    float rope_position_scale = 1.0f;  // "linear" RoPE scaling: positions are divided by it (global layers)
    int head_size = 0;  // q, k and v per head; 0: dim / n_heads (Qwen3 and Gemma 3 set it)
    ArchitectureFeatures arch;
    int head_dim() const { return head_size > 0 ? head_size : dim / n_heads; }
    int q_dim() const { return head_dim() * n_heads; }  // q's rows and attention's output width
    int kv_dim() const { return head_dim() * n_kv_heads; }
};

// Canonical tensor names (llama2.c naming), per layer N (q_dim = heads x head size):
//   tok_embeddings {vocab, dim}; norm {dim}; output {vocab, dim} (untied only)
//   layers.N.attention_norm {dim}; layers.N.wq {q_dim, dim}; layers.N.wk {kv_dim, dim};
//   layers.N.wv {kv_dim, dim}; layers.N.wo {dim, q_dim}; layers.N.ffn_norm {dim};
//   layers.N.w1 {hidden, dim}; layers.N.w2 {dim, hidden}; layers.N.w3 {hidden, dim}
//   with qkv_bias: layers.N.bq {q_dim}; layers.N.bk {kv_dim}; layers.N.bv {kv_dim}
//   with arch.qk_norm: layers.N.q_norm {head}; layers.N.k_norm {head}
//   with arch.post_norms: layers.N.post_attention_norm {dim}; layers.N.post_ffn_norm {dim}
//   rope_freqs {rotated / 2} (optional, Llama 3's RoPE scaling): pair i's frequency is divided by it
//   rope_factors_short, rope_factors_long {rotated / 2} (LongRoPE): the same, chosen by the context
// Files that store q|k|v or gate|up fused are split into these at load (views of their rows).
// RoPE rotates adjacent pairs (2i, 2i+1) of each head's first `rotated` dimensions as llama2.c
// does; loaders of weights stored for the rotate_half ("NeoX") pairing, (i, i + rotated/2) —
// Hugging Face's and llama.cpp's NeoX families' — reorder the q/k rows (biases, q/k norm gains)
// so every format shares this convention.
// What a ModelFile was read from.
enum class ModelFormat {
    Llama2cV0,    // llama2.c fp32
    Llama2cV2,    // llama2.c int8 ("ak42")
    Gguf,
    Safetensors,  // a Hugging Face folder
    Synthetic,    // random weights of a named shape, made in memory
};
// As files and messages name it: "llama2c-v0", "llama2c-v2", "gguf", "safetensors", "synthetic".
const char* format_name(ModelFormat f);
inline bool is_llama2c(ModelFormat f) { return f == ModelFormat::Llama2cV0 || f == ModelFormat::Llama2cV2; }

struct ModelFile {
    std::string path;
    ModelFormat format = ModelFormat::Gguf;  // every loader sets it
    LlamaConfig config;
    std::vector<Tensor> tensors;
    EmbeddedVocab embedded_tokenizer;  // the file's own vocabulary; empty when it has none
    std::string chat_template;       // GGUF tokenizer.chat_template (Jinja text), empty when absent
    std::shared_ptr<const void> storage;  // keeps the bytes behind Tensor::data alive

    const Tensor* find(const std::string& name) const;
    const Tensor& get(const std::string& name) const;  // throws FormatError naming the file
    const Tensor& classifier() const { return config.tied_classifier ? get("tok_embeddings") : get("output"); }
};

// Checks that every canonical tensor the configuration implies is present with its shape;
// throws FormatError "<path>: tensor 'X' ..." naming the file.
void validate_llama_tensors(const ModelFile& m);

// The per-pair divisors of the RoPE frequencies a model of `context` positions rotates by:
// Llama 3's rope_freqs, LongRoPE's long factors above its original context and short ones
// otherwise (as llama.cpp chooses), or null (ones).
const Tensor* rope_factor_tensor(const ModelFile& m, int context);

// The embedding table as the first layer reads it: dequantized, times the family's embedding
// scale (Gemma's sqrt(dim)); what EAGLE's layer reads too, on every engine and in training.
std::vector<float> input_embeddings(const ModelFile& m);


}  // namespace medusa
