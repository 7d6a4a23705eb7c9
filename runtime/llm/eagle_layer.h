// EAGLE's draft layer (Li et al., EAGLE: speculative sampling requires rethinking feature
// uncertainty): for position i it reads the target's final-norm hidden state f_i and the
// embedding of the next token e(t_{i+1}), fuses them with fc (2d -> d, with bias; EAGLE's code
// concatenates [e ; f], embedding first), and runs one Llama decoder layer without an input norm
// (attention with RoPE over its own cache, post-attention RMSNorm, SwiGLU) to predict f_{i+1}.
// The target's own LM head turns a predicted feature into a distribution over the next token.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "llm/language_model.h"
#include "model/model_file.h"

namespace medusa {

struct EagleLayer {
    int dim = 0, hidden_dim = 0, n_heads = 0, n_kv_heads = 0;
    float rope_theta = 10000.0f, rms_eps = 1e-5f;
    std::vector<float> fc_w;       // (dim, 2 dim): columns [0, dim) read e(t_{i+1}), [dim, 2 dim) read f_i
    std::vector<float> fc_b;       // (dim)
    std::vector<float> wq, wo;     // (dim, dim); q and k rows in llama2.c's adjacent-pair RoPE order
    std::vector<float> wk, wv;     // (kv_dim, dim)
    std::vector<float> post_norm;  // (dim)
    std::vector<float> w_gate, w_up;  // (hidden_dim, dim)
    std::vector<float> w_down;        // (dim, hidden_dim)
    std::string source;               // file it came from, or "init"

    int head_dim() const { return dim / n_heads; }
    int kv_dim() const { return head_dim() * n_kv_heads; }
    // A fresh layer for `target` (its shape): fc passes the feature through (f_{i+1} ~ f_i) and
    // the decoder layer's weights are small random values, so training starts from a sensible guess.
    static EagleLayer init(const LlamaConfig& target, uint64_t seed);
    // Throws FormatError naming `source` when the layer does not fit the target model.
    void check_fits(const LlamaConfig& target) const;
};

// The layer run on the CPU, with its own KV cache over (f_i, t_{i+1}) pairs: the reference the
// GPU layer is checked against, and the CPU engine's drafter. Embeddings and the LM head are
// the target's.
class CpuEagleModel {
public:
    CpuEagleModel(const EagleLayer& layer, const ModelFile& target, int context);
    // Runs block token t as the pair (features row t, e(block.tokens[t])) at block.positions[t],
    // into cache slot block.base + t (the mask and window as for the target). `features` holds
    // block.size() rows of dim floats.
    void forward(const TokenBlock& block, std::span<const float> features);
    std::span<const float> output(int t) const;  // the predicted feature of block token t
    std::span<const float> logits(int t);        // the target's LM head on it
    const EagleLayer& layer() const { return layer_; }

private:
    EagleLayer layer_;
    int context_;
    std::vector<float> embeddings_, classifier_;  // the target's, dequantized
    std::vector<float> key_cache_, value_cache_;  // (context, kv_dim)
    std::vector<float> out_, logits_;             // (T, dim), (T, vocab) of the last forward
    std::vector<uint8_t> logits_ready_;
    int vocab_ = 0;
};

}  // namespace medusa
