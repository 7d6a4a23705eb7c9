#include "llm/decoder_layer.h"

#include <vector>

#include "llm/attention_splits.h"
#include "llm/kernel_params.h"
#include "llm/token_block.h"

namespace medusa {

using namespace kernels;

size_t DecoderLayerWeights::bytes() const {
    return (attention_norm ? attention_norm->size() : 0) + ffn_norm->size() + (qkv_bias ? qkv_bias->size() : 0) +
           wqkv.bytes() + wo.bytes() + w13.bytes() + w2.bytes();
}

DecoderLayerRecorder::DecoderLayerRecorder(gpu::Context& ctx, DecoderShape shape, MatmulRecorder& matmuls,
                                           std::unique_ptr<gpu::Buffer> rope_factors)
    : ctx_(ctx), shape_(shape), matmuls_(matmuls), rope_factors_(std::move(rope_factors)) {
    // rope_kv always reads a bias and a factor per pair: zeros and ones where the model has none.
    if (!rope_factors_) rope_factors_ = upload_floats(ctx, std::vector<float>(size_t(shape.head_dim() / 2), 1.0f));
    no_bias_ = upload_floats(ctx, std::vector<float>(size_t(shape.dim + 2 * shape.kv_dim()), 0.0f));
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
                                            gpu::Buffer& params, uint32_t cache_offset, int T) {
    const uint32_t heads = uint32_t(shape_.n_heads), hd = uint32_t(shape_.head_dim()), ctx = uint32_t(shape_.context);
    AttentionPush att{uint32_t(shape_.dim), uint32_t(shape_.kv_dim()), hd, heads,
                      uint32_t(shape_.n_heads / shape_.n_kv_heads), ctx, cache_offset, 1u};
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

void DecoderLayerRecorder::record(gpu::CommandSequence& seq, const DecoderLayerWeights& w, const DecoderActivations& a,
                                  KvCache& kv, int layer, gpu::Buffer& params, int T) {
    const uint32_t dim = shape_.dim, kvd = shape_.kv_dim(), hd = shape_.head_dim(), hidden = shape_.hidden_dim;
    const uint32_t cache_offset = kv.layer_offset(layer);
    seq.stage("qkv");
    // CPU drivers: the biases, RoPE and cache writes in the qkv matmul (a dispatch fewer a layer,
    // about a tenth of a stories260K token on lavapipe); a separate rope_kv dispatch otherwise.
    const gpu::Buffer& bias = w.qkv_bias ? *w.qkv_bias : *no_bias_;
    const MatmulRope rope{.keys = &kv.keys(), .values = &kv.values(), .params = &params, .bias = &bias,
                          .factors = rope_factors_.get(), .q_dim = dim, .kv_dim = kvd, .head_dim = hd,
                          .cache_offset = cache_offset, .theta = shape_.rope_theta,
                          .position_scale = shape_.rope_position_scale};
    MatmulCall qkv{.w = &w.wqkv, .x = a.attention_in ? a.attention_in : a.x, .y = a.qkv,
                   .extra = w.attention_norm.get(), .flags = w.attention_norm ? kMatmulNorm : 0u,
                   .out_rows = w.wqkv.rows, .tokens = T, .x_stride = a.attention_in ? a.attention_in_stride : dim,
                   .y_stride = dim + 2 * kvd};
    const bool fused_rope = matmuls_.fuses_rope(qkv);
    if (fused_rope) qkv.flags |= kMatmulRope, qkv.rope = &rope;
    matmuls_.record(seq, qkv);
    if (!fused_rope) {
        // Built at first use: CPU drivers fuse it (each pipeline compiles for tens of ms there).
        if (!rope_kv_) rope_kv_ = std::make_unique<gpu::Kernel>(ctx_, gpu::Shader::rope_kv, 6, sizeof(RopePush));
        seq.dispatch_over(*rope_kv_, {*a.qkv, kv.keys(), kv.values(), params, bias, *rope_factors_},
                          RopePush{dim, kvd, hd, shape_.rope_theta, cache_offset, shape_.rope_position_scale},
                          dim / 2 + kvd / 2 + kvd, uint32_t(T));
    }
    seq.stage("attention");
    record_attention(seq, a, kv, params, cache_offset, T);
    seq.stage("output");
    matmuls_.record(seq, {.w = &w.wo, .x = a.att_out, .y = a.x, .flags = kMatmulAccum, .out_rows = int(dim),
                          .tokens = T, .x_stride = dim, .y_stride = dim});
    seq.stage("ffn");
    matmuls_.record(seq, {.w = &w.w13, .x = a.x, .y = a.hb, .extra = w.ffn_norm.get(),
                          .flags = kMatmulNorm | kMatmulSwiglu, .out_rows = int(hidden), .tokens = T, .x_stride = dim,
                          .y_stride = hidden});
    matmuls_.record(seq, {.w = &w.w2, .x = a.hb, .y = a.x, .flags = kMatmulAccum, .out_rows = int(dim), .tokens = T,
                          .x_stride = hidden, .y_stride = dim});
}

}  // namespace medusa
