// One in-memory description of a Llama-architecture model, whatever file it came from.
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/bpe_vocab.h"

namespace medusa {

// Raised for any malformed, truncated or unsupported input file; the message names the file.
struct FormatError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Element layouts, byte-exact as stored in the source files.
enum class DType {
    F32,   // little-endian float
    F16,   // IEEE half
    BF16,  // bfloat16
    Q8_0,  // GGUF blocks of 32: f16 scale + 32 x int8
    Q4_0,  // GGUF blocks of 32: f16 scale + 16 bytes of nibbles (low nibbles = elements 0..15), value (q-8)*d
    Q8_G,  // llama2.c v2: all int8 values of the tensor, then one f32 scale per group_size values
    // The other GGUF (ggml) block layouts, byte-exact; model/block_format.h gives their sizes.
    Q4_1, Q5_0, Q5_1,                // blocks of 32
    Q2_K, Q3_K, Q4_K, Q5_K, Q6_K,    // super-blocks of 256 with sub-block scales
    IQ4_NL, IQ4_XS,                  // 4-bit indices into a fixed non-linear table (blocks of 32, 256)
};
const char* dtype_name(DType t);

struct Tensor {
    std::string name;
    DType type = DType::F32;
    std::vector<int64_t> shape;  // outermost first: a matrix is {rows (outputs), cols (inputs)}
    int group_size = 0;          // values per block of a GGUF block type, the file's group size for Q8_G, 0 otherwise
    const uint8_t* data = nullptr;
    size_t nbytes = 0;
    int64_t numel() const;
};

// An F32 tensor viewing floats the caller owns (they must outlive it): heads, layers and
// training state handed to upload_matrix or write_safetensors. An empty shape: one dimension.
Tensor f32_tensor(std::string name, const std::vector<float>& v, std::vector<int64_t> shape = {});
// A shape as messages write it: "[2, 3]".
std::string shape_text(const std::vector<int64_t>& shape);

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
    float rope_position_scale = 1.0f;  // "linear" RoPE scaling: positions are divided by it
    int head_dim() const { return dim / n_heads; }
    int kv_dim() const { return head_dim() * n_kv_heads; }
};

// Canonical tensor names (llama2.c naming), per layer N:
//   tok_embeddings {vocab, dim}; norm {dim}; output {vocab, dim} (untied only)
//   layers.N.attention_norm {dim}; layers.N.wq {dim, dim}; layers.N.wk {kv_dim, dim};
//   layers.N.wv {kv_dim, dim}; layers.N.wo {dim, dim}; layers.N.ffn_norm {dim};
//   layers.N.w1 {hidden, dim}; layers.N.w2 {dim, hidden}; layers.N.w3 {hidden, dim}
//   with qkv_bias: layers.N.bq {dim}; layers.N.bk {kv_dim}; layers.N.bv {kv_dim}
//   rope_freqs {head_dim / 2} (optional, Llama 3's RoPE scaling): pair i's frequency is divided by it
// RoPE rotates adjacent pairs (2i, 2i+1) as llama2.c does; loaders of weights stored for the
// rotate_half ("NeoX") pairing, (i, i + head_dim/2) — Hugging Face's and llama.cpp's qwen2 — reorder
// the q/k rows (and biases) so every format shares this convention.
struct ModelFile {
    std::string path;
    std::string format;  // "llama2c-v0", "llama2c-v2", "gguf", "safetensors"
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

// Picks the loader by content (magic) and path: llama2.c .bin, .gguf, .safetensors / HF directory.
ModelFile load_model(const std::string& path);
// The same from bytes already in memory (fuzzers, tests); `name` is used in error messages.
ModelFile load_model_from_memory(std::shared_ptr<const std::vector<uint8_t>> bytes, const std::string& name);

}  // namespace medusa
