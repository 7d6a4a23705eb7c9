// EAGLE's draft layer (Li et al., EAGLE: speculative sampling requires rethinking feature
// uncertainty): for position i it reads the target's final-norm hidden state f_i and the
// embedding of the next token e(t_{i+1}), fuses them with fc (2d -> d, with bias; EAGLE's code
// concatenates [e ; f], embedding first), and runs one Llama decoder layer without an input norm
// (attention with RoPE over its own cache, post-attention RMSNorm, SwiGLU) to predict f_{i+1}.
// The target's own LM head turns a predicted feature into a distribution over the next token.
//
// EAGLE-3 (Li et al., EAGLE-3: scaling up inference acceleration via training-time test) feeds
// the layer the residual stream entering a few target layers instead, fused by fc (n·d -> d, no
// bias; a single layer is taken as it is, as SafeAILab's code does when the widths already match).
// Its attention reads cat(input_norm(e(t_{i+1})), hidden_norm(h_i)), 2d wide, embedding first; the
// residual is h_i. Its own norm and an LM head over a reduced draft vocabulary give the
// distribution; draft id i is target id draft_to_target[i]. Deeper levels feed the layer's own
// pre-norm output back as h.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "llm/language_model.h"
#include "model/model_file.h"

namespace medusa {

enum class EagleVersion { Eagle1, Eagle3 };  // Eagle1: EAGLE-1 and EAGLE-2's layer

struct EagleLayer {
    EagleVersion version = EagleVersion::Eagle1;
    int dim = 0, hidden_dim = 0, n_heads = 0, n_kv_heads = 0;
    int head_size = 0;  // a published drafter's head_dim where it is not dim / n_heads (Qwen3's); 0: that
    float rope_theta = 10000.0f, rms_eps = 1e-5f;
    // The draft's own RoPE scaling (its config's rope_scaling; a GGUF's rope_freqs): Llama 3's
    // divisors of the head_dim/2 frequencies (empty: none) and linear scaling's position divisor.
    // Layers trained here have none: the trainers rotate by rope_theta alone.
    std::vector<float> rope_freqs;
    float rope_position_scale = 1.0f;
    bool scales_rope() const { return !rope_freqs.empty() || rope_position_scale != 1.0f; }
    // The type the file stored the matrices in, F16 or BF16 where all of them share it (the GPU
    // keeps them so: half the bytes a drafted level reads), else F32 (trained here, quantized).
    DType matrix_type = DType::F32;
    std::vector<float> fc_w;       // (dim, 2 dim): columns [0, dim) read e(t_{i+1}), [dim, 2 dim) read f_i
    std::vector<float> fc_b;       // (dim)
    std::vector<float> wq, wo;     // (q_dim, dim), (dim, q_dim); q and k rows in llama2.c's adjacent-pair RoPE order
    std::vector<float> wk, wv;     // (kv_dim, dim)
    std::vector<float> post_norm;  // (dim)
    std::vector<float> w_gate, w_up;  // (hidden_dim, dim)
    std::vector<float> w_down;        // (dim, hidden_dim)
    // EAGLE-3 only. fc_w is (dim, n·dim) when it fuses() (see applies_fc), else empty; fc_b is
    // empty; wq, wk and wv read 2 dim columns.
    std::vector<int> target_layers;          // the layers whose inputs are the feature, in its order
    // Gains of an RMSNorm over the whole feature before fc (feature_dim(); llama.cpp's
    // norm_before_fc), or empty: the feature goes into fc as it is.
    std::vector<float> feature_norm;
    std::vector<float> input_norm, hidden_norm, final_norm;  // (dim) each
    std::vector<float> draft_head;           // (draft vocabulary, dim)
    std::vector<int> draft_to_target;        // target token id of each draft id
    int target_vocab = 0;                    // the target's vocabulary (t2d's length when written)
    bool applies_fc = false;                 // fuses(): a property of the layer, its weights loaded or not
    std::string source;               // file it came from, or "init"

    bool eagle3() const { return version == EagleVersion::Eagle3; }
    // Width of the target feature of one position: the target's final-norm hidden state, or the
    // fused layers' inputs side by side.
    int feature_dim() const { return eagle3() ? int(target_layers.size()) * dim : dim; }
    int attention_input() const { return eagle3() ? 2 * dim : dim; }  // columns of wq, wk, wv
    // EAGLE-3 applies fc: several layers fused, or (llama.cpp's files on small targets) one layer
    // listed several times, whose fc blocks were added up. SafeAILab's single layer has no fc.
    bool fuses() const { return eagle3() && applies_fc; }
    bool norms_feature() const { return !feature_norm.empty(); }
    int draft_vocab() const { return int(draft_to_target.size()); }

    int head_dim() const { return head_size > 0 ? head_size : dim / n_heads; }
    int q_dim() const { return head_dim() * n_heads; }
    int kv_dim() const { return head_dim() * n_kv_heads; }
    // A fresh layer for `target` (its shape): fc passes the feature through (f_{i+1} ~ f_i) and
    // the decoder layer's weights are small random values, so training starts from a sensible guess.
    static EagleLayer init(const LlamaConfig& target, uint64_t seed);
    // A fresh EAGLE-3 layer reading the inputs of `layers` with the draft vocabulary
    // `draft_to_target`: fc averages the fused layers, the decoder weights are small random
    // values, and the final norm and draft head start as the target's own (`final_norm`, and the
    // rows of `classifier`, (vocab, dim), of the draft tokens), so the layer starts by reading the
    // residual stream through the target's head.
    static EagleLayer init_eagle3(const LlamaConfig& target, std::vector<int> layers, std::vector<int> draft_to_target,
                                  std::span<const float> final_norm, std::span<const float> classifier, uint64_t seed);
    // Throws FormatError naming `source` when the layer does not fit the target model.
    void check_fits(const LlamaConfig& target) const;
    // "SOURCE: the EAGLE layer holds NaN or infinite weights" when any weight is not finite (its
    // drafts would be NaN), else "".
    std::string non_finite_note() const;
};

// SafeAILab's choice of the layers EAGLE-3 fuses: 2, L/2 and L-3 of an L-layer target, each once,
// in layer order (a small target may collapse them to one); empty when none exists.
std::vector<int> eagle3_default_layers(int target_layers);

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
    // A target feature (feature_dim() floats) as the layer's input row (dim floats): EAGLE-3's fc
    // (after its feature norm where it has one), or the feature itself.
    void fuse(std::span<const float> target_feature, float* row) const;
    std::span<const float> output(int t) const;  // the predicted feature of block token t
    // The target's LM head on it; EAGLE-3: its own head over the draft vocabulary, placed at the
    // target ids (every other token -infinity).
    std::span<const float> logits(int t);
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
