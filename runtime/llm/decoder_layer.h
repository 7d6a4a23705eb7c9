// One decoder layer recorded into a command sequence, shared by the target model's layers and
// EAGLE's draft layer: [RMSNorm fused into] q|k|v, RoPE (and the q/k norms, where the model has
// them) fused into the K/V cache write, attention over the cache and the block (mask and window
// from the block parameters; a local layer's sliding window), the output projection with the
// residual add, RMSNorm + gate|up + SwiGLU (or GeGLU) in one matmul, down with the residual add;
// with post-norms, each projection's output normalised into the residual instead. x holds the
// layer's input and, after it, its output.
#pragma once
#include <map>
#include <memory>
#include <optional>

#include "gpu/buffer.h"
#include "gpu/command_sequence.h"
#include "gpu/kernel.h"
#include "llm/gpu_matrix.h"
#include "llm/kv_cache.h"
#include "llm/matmul_recorder.h"
#include "model/model_file.h"

namespace medusa {

struct DecoderLayerWeights {
    std::unique_ptr<gpu::Buffer> attention_norm;  // null: no input norm (EAGLE's layer)
    std::unique_ptr<gpu::Buffer> ffn_norm;
    std::unique_ptr<gpu::Buffer> qkv_bias;  // (q_dim + 2 kv_dim): Qwen2's q|k|v biases; null: none
    std::unique_ptr<gpu::Buffer> qk_norm;   // (2 head_dim): q_norm's gains, then k_norm's; null: none
    std::unique_ptr<gpu::Buffer> post_attention_norm, post_ffn_norm;  // (dim) each: post-norms; null: none
    GpuMatrix wqkv, wo, w13, w2;  // q|k|v stacked, o, gate|up stacked, down
    LayerAttention attention;     // its window and RoPE
    size_t bytes() const;
};

// Scratch buffers of one block: x (T, dim), qkv (T, q_dim + 2 kv_dim), att_out (T, q_dim),
// hb (T, hidden), scores (T, heads, ctx: attention_split.comp's partial sums). attention_in,
// when set, is what q|k|v read instead of x (T, attention_in_stride floats a row): EAGLE-3's
// [input_norm(e) ; hidden_norm(h)], while x stays the residual. post (T, dim): a projection's
// output before its post-norm (layers with post-norms only).
struct DecoderActivations {
    gpu::Buffer *x, *qkv, *att_out, *hb, *scores;
    gpu::Buffer* attention_in = nullptr;
    uint32_t attention_in_stride = 0;
    gpu::Buffer* post = nullptr;
};

struct DecoderShape {
    int dim = 0, hidden_dim = 0, n_heads = 0, n_kv_heads = 0, context = 0;
    float rope_theta = 10000.0f;
    float rope_position_scale = 1.0f;  // "linear" RoPE scaling divides positions by it
    int head_size = 0;                 // 0: dim / n_heads
    int rope_dims = 0;                 // rotated dimensions of a head; 0: all
    float rope_attn_factor = 1.0f;
    float attention_scale = 0.0f;      // 0: 1 / sqrt(head size)
    float rms_eps = 1e-5f;             // of the q/k norms
    GateActivation activation = GateActivation::Silu;
    int head_dim() const { return head_size > 0 ? head_size : dim / n_heads; }
    int q_dim() const { return head_dim() * n_heads; }
    int kv_dim() const { return head_dim() * n_kv_heads; }
    int rotated() const { return rope_dims > 0 ? rope_dims : head_dim(); }
    // A model's shape (its global layers' RoPE; each layer's own is in its weights' attention).
    static DecoderShape of(const LlamaConfig& c);
};

class DecoderLayerRecorder {
public:
    // rope_factors: (rotated / 2) divisors of the RoPE frequencies (Llama 3's rope_freqs, LongRoPE's); null: ones.
    DecoderLayerRecorder(gpu::Context& ctx, DecoderShape shape, MatmulRecorder& matmuls,
                         std::unique_ptr<gpu::Buffer> rope_factors = nullptr);
    ~DecoderLayerRecorder();
    // Layer `layer` of `kv` over the block in `params` (layouts/block_params.h) of `n_tokens`.
    void record(gpu::CommandSequence& seq, const DecoderLayerWeights& w, const DecoderActivations& a, KvCache& kv,
                int layer, gpu::Buffer& params, int n_tokens);

private:
    gpu::Context& ctx_;
    DecoderShape shape_;
    MatmulRecorder& matmuls_;
    // Attention over the cache and the block: attention.comp in one pass (CPU drivers), else
    // attention_split.comp over ranges of the keys.
    void record_attention(gpu::CommandSequence& seq, const DecoderActivations& a, KvCache& kv, gpu::Buffer& params,
                          int layer, const LayerAttention& attention, int n_tokens);
    // q, k, v after the qkv matmul (where it did not fuse them): biases, q/k norms, RoPE, the cache.
    void record_rope(gpu::CommandSequence& seq, const DecoderLayerWeights& w, const DecoderActivations& a, KvCache& kv,
                     int layer, gpu::Buffer& params, const gpu::Buffer& bias, int n_tokens);
    // x += post_norm(y) (post-norms), one subgroup a token.
    void record_post_norm(gpu::CommandSequence& seq, const gpu::Buffer& y, const gpu::Buffer& gains, gpu::Buffer& x,
                          gpu::Buffer& params, int n_tokens);
    // attention.comp through storage loads or texel views, per tokens a subgroup takes (built at
    // first use, like rope_kv_ and the split kernels).
    const gpu::Kernel& attention_kernel(bool texel, uint32_t tokens_per_subgroup);
    std::unique_ptr<gpu::Kernel> rope_kv_, head_rope_kv_, attention_split_, post_norm_;
    std::unique_ptr<gpu::Buffer> arrivals_;  // attention_split.comp's count per (token, head), zero between dispatches
    uint32_t one_pass_ = 0;  // attention's ONE_PASS_HEAD_DIM: the head size on CPU drivers, else 0
    std::optional<uint32_t> wanted_splits_;  // MEDUSA_ATTENTION_SPLITS
    std::map<std::pair<bool, uint32_t>, std::unique_ptr<gpu::Kernel>> attention_;
    std::unique_ptr<gpu::Buffer> rope_factors_, no_bias_;
};

}  // namespace medusa
