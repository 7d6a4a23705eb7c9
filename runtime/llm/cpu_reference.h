// The plain C++ forward pass the GPU kernels are checked against: readable, unfused,
// fp32 throughout (quantized weights are dequantized once at load, exactly as the GPU reads them).
#pragma once
#include <vector>

#include "llm/cache_contents.h"
#include "llm/language_model.h"

namespace medusa {

class CpuReferenceModel : public LanguageModel {
public:
    // `context`: positions of the KV cache; 0, the model's trained context length.
    explicit CpuReferenceModel(const ModelFile& file, int context = 0);

    const LlamaConfig& config() const override { return cfg_; }
    void forward(const TokenBlock& block) override;
    std::span<const float> logits(int t) override;
    int argmax(int t) override;
    const char* engine_name() const override { return "cpu-reference"; }
    // Final-norm hidden state of block token t (what Medusa heads read).
    std::span<const float> hidden(int t) const;
    // The feature of the token in cache slot `slot`: its final-norm hidden state (what EAGLE's
    // layer reads), or after capture_layer_inputs, the residual stream entering those layers side
    // by side (EAGLE-3's). Forwards from then on write it.
    std::span<const float> feature(int slot) const;
    void capture_layer_inputs(std::vector<int> layers);
    // Slots [0, n) hold the final entries of these tokens (see CacheContents).
    std::span<const int> valid_tokens() const { return contents_.valid_tokens(); }
    // Moves the accepted path of the tree verified at slot `base` (block indices, root first,
    // increasing; `tokens` are theirs) to slots base, base+1, ... in every layer.
    void keep_path(int base, std::span<const int> path, std::span<const int> tokens);

private:
    struct Layer {
        std::vector<float> attention_norm, wq, wk, wv, wo, ffn_norm, w1, w2, w3;
        std::vector<float> bq, bk, bv;               // qkv_bias only
        std::vector<float> q_norm, k_norm;            // arch.qk_norm only
        std::vector<float> post_attention_norm, post_ffn_norm;  // arch.post_norms only
        LayerAttention attention;
    };
    LlamaConfig cfg_;
    std::vector<float> embeddings_, final_norm_, classifier_;
    std::vector<float> rope_factors_;  // per-pair frequency divisors (Llama 3's, LongRoPE's); empty: none
    std::vector<Layer> layers_;
    std::vector<std::vector<float>> key_cache_, value_cache_;  // per layer [context][kv_dim]
    std::vector<float> features_;                              // [context][feature_dim_]
    std::vector<int> feature_layers_;                          // empty: the final-norm hidden state
    int feature_dim_ = 0;
    std::vector<float> logits_, hidden_;                       // [T][vocab], [T][dim]
    int block_size_ = 0;
    CacheContents contents_;
};

// Helpers shared by the reference and by tests that check single kernels.
void rmsnorm(float* out, const float* x, const float* gain, int n, float eps);
void matvec(float* out, const float* x, const float* w, int in, int rows);
// How RoPE rotates each head: adjacent pairs (2i, 2i+1) of its first `rotated` dimensions (0:
// all) by pos / position_scale times pair i's frequency theta^(-2i/rotated), divided by
// factors[i] when given (Llama 3's rope_freqs, LongRoPE's factors); the rotated pairs are then
// multiplied by attn_factor (LongRoPE's), the others left as they are.
struct RopeRotation {
    int head_dim = 0;
    int rotated = 0;
    float theta = 10000.0f;
    const float* factors = nullptr;
    float position_scale = 1.0f;
    float attn_factor = 1.0f;
};
void rope_rotate(float* v, int n, int pos, const RopeRotation& r);
// Whole heads, no attention factor.
inline void rope_rotate(float* v, int n, int head_dim, int pos, float theta, const float* freq_factors = nullptr,
                        float position_scale = 1.0f) {
    rope_rotate(v, n, pos, RopeRotation{head_dim, 0, theta, freq_factors, position_scale, 1.0f});
}
// x * 0.5 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): the GELU of GeGLU gates (Gemma).
float gelu_tanh(float x);

}  // namespace medusa
