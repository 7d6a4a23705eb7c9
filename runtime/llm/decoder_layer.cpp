#include "llm/decoder_layer.h"

#include <vector>

#include "llm/attention_splits.h"
#include "llm/kernel_params.h"
#include "llm/token_block.h"

namespace medusa {

using namespace kernels;

size_t DecoderLayerWeights::bytes() const {
    size_t n = wqkv.bytes() + wo.bytes() + w13.bytes() + w2.bytes();
    for (const auto* b : {&attention_norm, &ffn_norm, &qkv_bias, &qk_norm, &post_attention_norm, &post_ffn_norm})
        n += *b ? (*b)->size() : 0;
    return n;
}

DecoderShape DecoderShape::of(const LlamaConfig& c) {
    DecoderShape s{c.dim, c.hidden_dim, c.n_heads, c.n_kv_heads, c.seq_len, c.rope_theta, c.rope_position_scale};
    s.head_size = c.head_size;
    s.rope_dims = c.arch.rope_dims;
    s.rope_attn_factor = c.arch.rope_attn_factor;
    s.attention_scale = c.arch.attention_scale;
    s.rms_eps = c.rms_eps;
    s.activation = c.arch.activation;
    return s;
}

DecoderLayerRecorder::DecoderLayerRecorder(gpu::Context& ctx, DecoderShape shape, MatmulRecorder& matmuls,
                                           std::unique_ptr<gpu::Buffer> rope_factors)
    : ctx_(ctx), shape_(shape), matmuls_(matmuls), rope_factors_(std::move(rope_factors)) {
    // The RoPE kernels always read a bias and a factor per pair: zeros and ones where the model has none.
    if (!rope_factors_) rope_factors_ = upload_floats(ctx, std::vector<float>(size_t(shape.rotated() / 2), 1.0f));
    no_bias_ = upload_floats(ctx, std::vector<float>(size_t(shape.q_dim() + 2 * shape.kv_dim()), 0.0f));
    // CPU drivers: attention in one pass with q in registers (needs a head size divisible by 4).
    one_pass_ = matmuls.cpu_layouts() && shape.head_dim() % 4 == 0 ? uint32_t(shape.head_dim()) : 0u;
    wanted_splits_ = attention_splits_from_environment();
}

const gpu::Kernel& DecoderLayerRecorder::attention_kernel(bool texel, uint32_t tokens_per_subgroup) {
    auto& k = attention_[{texel, tokens_per_subgroup}];
    if (!k)
        k = std::make_unique<gpu::Kernel>(ctx_, attention_shader(texel), attention_bindings(texel),
                                          sizeof(AttentionPush), std::vector<uint32_t>{one_pass_, tokens_per_subgroup});
    return *k;
}

DecoderLayerRecorder::~DecoderLayerRecorder() = default;

void DecoderLayerRecorder::record_attention(gpu::CommandSequence& seq, const DecoderActivations& a, KvCache& kv,
                                            gpu::Buffer& params, int layer, const LayerAttention& attention, int T) {
    const uint32_t heads = uint32_t(shape_.n_heads), hd = uint32_t(shape_.head_dim()), ctx = uint32_t(shape_.context);
    const float scale = shape_.attention_scale > 0 ? shape_.attention_scale : 1.0f / std::sqrt(float(hd));
    AttentionPush att{uint32_t(shape_.q_dim()), uint32_t(shape_.kv_dim()), hd, heads,
                      uint32_t(shape_.n_heads / shape_.n_kv_heads), ctx, kv.layer_offset(layer), 1u, scale,
                      uint32_t(attention.window), kv.layer_rows(layer)};
    if (!one_pass_) {
        // GPUs: a workgroup per (token, head, range of keys), the last of a pair's ranges merging them.
        att.splits = attention_splits(heads, T, ctx, hd, wanted_splits_);
        if (!attention_split_) {
            attention_split_ = std::make_unique<gpu::Kernel>(ctx_, gpu::Shader::attention_split, 7, sizeof(AttentionPush));
            arrivals_ = gpu::zeroed_floats(ctx_, size_t(heads) * TokenBlock::kMaxTokens);
        }
        seq.dispatch(*attention_split_, {*a.qkv, kv.keys(), kv.values(), params, *a.scores, *a.att_out, *arrivals_},
                     att, heads * uint32_t(T) * att.splits);
        return;
    }
    const uint32_t tokens_per_subgroup = attention_tokens_per_subgroup(one_pass_, T);
    const uint32_t att_groups = subgroup_item_groups(ctx_, heads * div_up(T, tokens_per_subgroup));
    using gpu::TexelFormat;
    // Texel reads for single tokens too: perf put a quarter of a stories110m-shaped decode step in
    // the cache's per-lane storage loads (lavapipe; stories260K decodes 1.8x as fast with them).
    if (matmuls_.config().texel && kv.keys().texel_view(TexelFormat::F32x4) &&
        kv.values().texel_view(TexelFormat::F32x4) && a.qkv->texel_view(TexelFormat::F32x4) &&
        params.texel_view(TexelFormat::U32x4))
        seq.dispatch(attention_kernel(true, tokens_per_subgroup),
                     {*a.qkv, kv.keys(), kv.values(), params, *a.att_out,
                      gpu::texel(kv.keys(), TexelFormat::F32x4), gpu::texel(kv.values(), TexelFormat::F32x4),
                      gpu::texel(*a.qkv, TexelFormat::F32x4), gpu::texel(params, TexelFormat::U32x4)},
                     att, att_groups);
    else
        seq.dispatch(attention_kernel(false, tokens_per_subgroup),
                     {*a.qkv, kv.keys(), kv.values(), params, *a.att_out}, att, att_groups);
}

void DecoderLayerRecorder::record_rope(gpu::CommandSequence& seq, const DecoderLayerWeights& w,
                                       const DecoderActivations& a, KvCache& kv, int layer, gpu::Buffer& params,
                                       const gpu::Buffer& bias, int T) {
    const uint32_t q_dim = shape_.q_dim(), kvd = shape_.kv_dim(), hd = shape_.head_dim();
    const RopePush push{q_dim, kvd, hd, w.attention.rope_theta, kv.layer_offset(layer), w.attention.rope_position_scale,
                        uint32_t(shape_.rotated()), shape_.rope_attn_factor, kv.layer_rows(layer),
                        uint32_t(shape_.n_heads), uint32_t(shape_.n_kv_heads), shape_.rms_eps};
    // Built at first use: CPU drivers fuse plain RoPE into the matmul (each pipeline compiles for
    // tens of ms there).
    if (w.qk_norm) {
        if (!head_rope_kv_) head_rope_kv_ = std::make_unique<gpu::Kernel>(ctx_, gpu::Shader::head_rope_kv, 7, sizeof(RopePush));
        seq.dispatch(*head_rope_kv_, {*a.qkv, kv.keys(), kv.values(), params, bias, *rope_factors_, *w.qk_norm}, push,
                     subgroup_item_groups(ctx_, uint32_t(T) * uint32_t(shape_.n_heads + shape_.n_kv_heads)));
        return;
    }
    if (!rope_kv_) rope_kv_ = std::make_unique<gpu::Kernel>(ctx_, gpu::Shader::rope_kv, 6, sizeof(RopePush));
    seq.dispatch_over(*rope_kv_, {*a.qkv, kv.keys(), kv.values(), params, bias, *rope_factors_}, push,
                      q_dim / 2 + kvd / 2 + kvd, uint32_t(T));
}

void DecoderLayerRecorder::record_post_norm(gpu::CommandSequence& seq, const gpu::Buffer& y, const gpu::Buffer& gains,
                                            gpu::Buffer& x, gpu::Buffer& params, int T) {
    if (!post_norm_) post_norm_ = std::make_unique<gpu::Kernel>(ctx_, gpu::Shader::rmsnorm, 5, sizeof(RmsnormPush));
    // The feature binding is never written (store_features 0): the output serves to fill it.
    seq.dispatch(*post_norm_, {y, gains, x, x, params},
                 RmsnormPush{uint32_t(shape_.dim), uint32_t(T), shape_.rms_eps, 0u, 1u},
                 subgroup_item_groups(ctx_, uint32_t(T)));
}

void DecoderLayerRecorder::record(gpu::CommandSequence& seq, const DecoderLayerWeights& w, const DecoderActivations& a,
                                  KvCache& kv, int layer, gpu::Buffer& params, int T) {
    const uint32_t dim = shape_.dim, q_dim = shape_.q_dim(), kvd = shape_.kv_dim(), hd = shape_.head_dim();
    const uint32_t hidden = shape_.hidden_dim;
    if ((w.post_attention_norm || w.post_ffn_norm) && !a.post)
        throw std::invalid_argument("a layer with post-norms needs its scratch buffer");
    seq.stage("qkv");
    // The biases, RoPE and cache writes in the qkv matmul (a dispatch and a barrier fewer a layer;
    // about a tenth of a stories260K token on lavapipe); a separate RoPE dispatch where the matmul
    // is tiled or cannot read texels in the lane-per-row layout, and always where q and k are
    // normalised per head first.
    const gpu::Buffer& bias = w.qkv_bias ? *w.qkv_bias : *no_bias_;
    const MatmulRope rope{.keys = &kv.keys(), .values = &kv.values(), .params = &params, .bias = &bias,
                          .factors = rope_factors_.get(), .q_dim = q_dim, .kv_dim = kvd, .head_dim = hd,
                          .cache_offset = kv.layer_offset(layer), .rotated = uint32_t(shape_.rotated()),
                          .cache_rows = kv.layer_rows(layer), .theta = w.attention.rope_theta,
                          .position_scale = w.attention.rope_position_scale, .attn_factor = shape_.rope_attn_factor};
    MatmulCall qkv{.w = &w.wqkv, .x = a.attention_in ? a.attention_in : a.x, .y = a.qkv,
                   .extra = w.attention_norm.get(), .flags = w.attention_norm ? kMatmulNorm : 0u,
                   .out_rows = w.wqkv.rows, .tokens = T, .x_stride = a.attention_in ? a.attention_in_stride : dim,
                   .y_stride = q_dim + 2 * kvd};
    const bool fused_rope = !w.qk_norm && matmuls_.fuses_rope(qkv);
    if (fused_rope) qkv.flags |= kMatmulRope, qkv.rope = &rope;
    matmuls_.record(seq, qkv);
    if (!fused_rope) record_rope(seq, w, a, kv, layer, params, bias, T);
    seq.stage("attention");
    record_attention(seq, a, kv, params, layer, w.attention, T);
    seq.stage("output");
    // With a post-norm the projection goes to scratch, normalised into the residual after.
    gpu::Buffer* attn_out = w.post_attention_norm ? a.post : a.x;
    matmuls_.record(seq, {.w = &w.wo, .x = a.att_out, .y = attn_out, .flags = w.post_attention_norm ? 0u : kMatmulAccum,
                          .out_rows = int(dim), .tokens = T, .x_stride = q_dim, .y_stride = dim});
    if (w.post_attention_norm) record_post_norm(seq, *a.post, *w.post_attention_norm, *a.x, params, T);
    seq.stage("ffn");
    const uint32_t gate = shape_.activation == GateActivation::GeluTanh ? kMatmulGelu : 0u;
    matmuls_.record(seq, {.w = &w.w13, .x = a.x, .y = a.hb, .extra = w.ffn_norm.get(),
                          .flags = kMatmulNorm | kMatmulSwiglu | gate, .out_rows = int(hidden), .tokens = T,
                          .x_stride = dim, .y_stride = hidden});
    gpu::Buffer* ffn_out = w.post_ffn_norm ? a.post : a.x;
    matmuls_.record(seq, {.w = &w.w2, .x = a.hb, .y = ffn_out, .flags = w.post_ffn_norm ? 0u : kMatmulAccum,
                          .out_rows = int(dim), .tokens = T, .x_stride = hidden, .y_stride = dim});
    if (w.post_ffn_norm) record_post_norm(seq, *a.post, *w.post_ffn_norm, *a.x, params, T);
}

}  // namespace medusa
