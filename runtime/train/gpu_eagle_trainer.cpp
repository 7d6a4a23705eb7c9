#include "train/gpu_eagle_trainer.h"

#include <stdexcept>

#include "train/eagle_flat_params.h"

namespace medusa::train {

using namespace layout;

GpuEagleTrainer::GpuEagleTrainer(gpu::Context& ctx, const EagleLayer& init, const std::vector<float>& lm_head,
                                 int vocab, int sequences, int seq_len, const EagleLossWeights& weights,
                                 TrainMatmul matmul)
    : GpuEagleTrainerBase(ctx, init, matmul), vocab_(vocab), seq_len_(seq_len), rows_(sequences * seq_len),
      weights_(weights) {
    if (sequences < 1 || seq_len < 1) throw std::invalid_argument("EAGLE training needs at least one sequence");
    if (lm_head.size() != size_t(vocab) * init.dim) throw std::invalid_argument("LM head of the wrong size");
    if (init.scales_rope())
        throw std::invalid_argument("training a layer with RoPE scaling is not supported: its RoPE is rope_theta's alone");
    for (auto* t : {&shape_.fc_w, &shape_.fc_b, &shape_.wq, &shape_.wk, &shape_.wv, &shape_.wo, &shape_.post_norm,
                    &shape_.w_gate, &shape_.w_up, &shape_.w_down})
        t->clear();  // only the sizes are kept on the CPU
    const size_t R = rows_, d = init.dim, kv = init.kv_dim(), hid = init.hidden_dim, V = vocab;
    using gpu::MemoryKind;
    lm_head_ = gpu::zeroed_floats(ctx, V * d, MemoryKind::Device);
    lm_head_->upload(lm_head.data(), lm_head.size() * 4);
    input_ = gpu::zeroed_floats(ctx, R * 2 * d, MemoryKind::Host);
    target_ = gpu::zeroed_floats(ctx, R * d, MemoryKind::Host);
    positions_ = gpu::zeroed_floats(ctx, R, MemoryKind::Host);
    row_w_ = gpu::zeroed_floats(ctx, R, MemoryKind::Host);
    stats_ = gpu::zeroed_floats(ctx, 3 * R, MemoryKind::Host);
    x_ = gpu::zeroed_floats(ctx, R * d, MemoryKind::Device);
    qkv_ = gpu::zeroed_floats(ctx, R * (d + 2 * kv), MemoryKind::Device);
    att_ = gpu::zeroed_floats(ctx, R * d, MemoryKind::Device);
    lse_ = gpu::zeroed_floats(ctx, R * init.n_heads, MemoryKind::Device);
    h_ = gpu::zeroed_floats(ctx, R * d, MemoryKind::Device);
    normed_ = gpu::zeroed_floats(ctx, R * d, MemoryKind::Device);
    rstd_ = gpu::zeroed_floats(ctx, R, MemoryKind::Device);
    gu_ = gpu::zeroed_floats(ctx, R * 2 * hid, MemoryKind::Device);
    a_ = gpu::zeroed_floats(ctx, R * hid, MemoryKind::Device);
    out_ = gpu::zeroed_floats(ctx, R * d, MemoryKind::Device);
    d_out_ = gpu::zeroed_floats(ctx, R * d, MemoryKind::Device);
    d_qkv_ = gpu::zeroed_floats(ctx, R * (d + 2 * kv), MemoryKind::Device);
    d_x_ = gpu::zeroed_floats(ctx, R * d, MemoryKind::Device);
    allocate_shared_scratch(ctx, R, V);
    record_sequences(ctx);
}

GpuEagleTrainer::~GpuEagleTrainer() { seqs_.reset(); }  // its recorded commands before the buffers they name

void GpuEagleTrainer::record(gpu::CommandSequence& s, bool backward, bool update) {
    const EagleFlatLayout at(shape_);
    const uint32_t R = rows_, d = shape_.dim, kv = shape_.kv_dim(), hid = shape_.hidden_dim, V = vocab_;
    const uint32_t qkv_w = d + 2 * kv;
    const gpu::Buffer &params = opt_.params(), &grads = opt_.grads();
    auto par = [&](size_t off, uint32_t in) { return Mat{params, uint32_t(off), in}; };
    auto grad = [&](size_t off, uint32_t in) { return Mat{grads, uint32_t(off), in}; };
    auto rows = [](const gpu::Buffer& b, uint32_t width) { return Mat{b, 0, width}; };
    const TrainBiasPush fc_bias{R, d, d, uint32_t(at.fc_b), 0};
    const TrainRopePush rope{R, d + kv, qkv_w, uint32_t(shape_.head_dim()), shape_.rope_theta, 1.0f};
    const TrainAttentionPush attn{R, uint32_t(seq_len_), uint32_t(shape_.n_heads), uint32_t(shape_.n_kv_heads), qkv_w};
    const TrainRmsnormPush norm{R, d, uint32_t(at.post_norm), 1, shape_.rms_eps, 0};
    const TrainSwigluPush swiglu{R, hid};

    s.begin();
    // Forward: x = fc([e ; f]) + b; qkv, RoPE, attention; h = x + o_proj; SwiGLU MLP on the
    // post-attention norm; f-hat = h + down.
    s.stage("forward: fc, q|k|v, MLP");
    k_.linear(s, rows(*input_, 2 * d), par(at.fc_w, 2 * d), rows(*x_, d), R, 2 * d, d);
    k_.bias(s, *x_, params, fc_bias);
    k_.linear(s, rows(*x_, d), par(at.qkv, d), rows(*qkv_, qkv_w), R, d, qkv_w);
    k_.rope(s, *qkv_, *positions_, rope);
    s.stage("attention");
    k_.attention(s, *qkv_, *att_, *lse_, attn);
    s.stage("forward: fc, q|k|v, MLP");
    s.copy(*x_, 0, *h_, 0, size_t(R) * d * 4);
    k_.linear(s, rows(*att_, d), par(at.wo, d), rows(*h_, d), R, d, d, true);
    k_.rmsnorm(s, *h_, *normed_, *rstd_, params, norm);
    k_.linear(s, rows(*normed_, d), par(at.gate_up, d), rows(*gu_, 2 * hid), R, d, 2 * hid);
    k_.swiglu(s, *gu_, *a_, swiglu);
    s.copy(*h_, 0, *out_, 0, size_t(R) * d * 4);
    k_.linear(s, rows(*a_, hid), par(at.w_down, hid), rows(*out_, d), R, hid, d, true);
    // Loss: the target's frozen LM head turns f-hat and f into logits.
    const Mat lm{*lm_head_, 0, d};
    s.stage("LM head and losses");
    k_.linear(s, rows(*out_, d), lm, rows(*logits_, V), R, d, V);
    k_.linear(s, rows(*target_, d), lm, rows(*target_logits_, V), R, d, V);
    k_.smooth_l1(s, *out_, *target_, *row_w_, *d_out_, *stats_, {R, d, 0, weights_.beta, weights_.feature, 0});
    k_.soft_cross_entropy(s, *logits_, *target_logits_, *row_w_, *stats_, R, {V, R, 2 * R, weights_.token});
    if (backward) {
        k_.linear_dx(s, rows(*logits_, V), lm, rows(*d_out_, d), R, d, V, true);
        s.stage("backward: MLP, q|k|v, fc");
        k_.linear_dw(s, rows(*d_out_, d), rows(*a_, hid), grad(at.w_down, hid), R, hid, d);
        k_.linear_dx(s, rows(*d_out_, d), par(at.w_down, hid), rows(*d_a_, hid), R, hid, d);
        k_.swiglu_backward(s, *gu_, *d_a_, *d_gu_, swiglu);
        k_.linear_dw(s, rows(*d_gu_, 2 * hid), rows(*normed_, d), grad(at.gate_up, d), R, d, 2 * hid);
        k_.linear_dx(s, rows(*d_gu_, 2 * hid), par(at.gate_up, d), rows(*d_normed_, d), R, d, 2 * hid);
        s.copy(*d_out_, 0, *d_h_, 0, size_t(R) * d * 4);  // the residual
        TrainRmsnormPush acc = norm;
        acc.accumulate = 1;
        k_.rmsnorm_dx(s, *h_, *d_normed_, *rstd_, params, *d_h_, acc);
        k_.rmsnorm_dgain(s, *h_, *d_normed_, *rstd_, grads, norm);
        k_.linear_dw(s, rows(*d_h_, d), rows(*att_, d), grad(at.wo, d), R, d, d);
        k_.linear_dx(s, rows(*d_h_, d), par(at.wo, d), rows(*d_att_, d), R, d, d);
        s.stage("attention");
        k_.attention_backward(s, *qkv_, *att_, *lse_, *d_att_, *d_qkv_, attn);
        s.stage("backward: MLP, q|k|v, fc");
        TrainRopePush back = rope;
        back.direction = -1.0f;
        k_.rope(s, *d_qkv_, *positions_, back);
        k_.linear_dw(s, rows(*d_qkv_, qkv_w), rows(*x_, d), grad(at.qkv, d), R, d, qkv_w);
        s.copy(*d_h_, 0, *d_x_, 0, size_t(R) * d * 4);  // the residual
        k_.linear_dx(s, rows(*d_qkv_, qkv_w), par(at.qkv, d), rows(*d_x_, d), R, d, qkv_w, true);
        k_.linear_dw(s, rows(*d_x_, d), rows(*input_, 2 * d), grad(at.fc_w, 2 * d), R, 2 * d, d);
        k_.bias_grad(s, *d_x_, grads, fc_bias);
        s.stage("clipping and AdamW");
        opt_.record_update(s, k_, update);
    }
    s.end();
}

void GpuEagleTrainer::write_inputs(const EagleBatch& b, const AdamW& opt, int step) {
    const size_t R = rows_, d = shape_.dim;
    if (b.rows != rows_ || b.seq_len != seq_len_ || b.input.size() != R * 2 * d || b.target.size() != R * d ||
        b.positions.size() != R || b.row_weight.size() != R)
        throw std::invalid_argument("an EAGLE batch of the wrong shape for this trainer");
    input_->upload(b.input.data(), b.input.size() * 4);
    target_->upload(b.target.data(), b.target.size() * 4);
    positions_->upload(b.positions.data(), R * 4);
    row_w_->upload(b.row_weight.data(), R * 4);
    opt_.set_step(opt, step);
}

EagleBatchStats GpuEagleTrainer::read_stats(const EagleBatch& b) const {
    std::vector<float> st(3 * size_t(rows_));
    stats_->download(st.data(), st.size() * 4);
    EagleBatchStats s;
    s.ranks.assign(rows_, -1);
    for (int r = 0; r < rows_; ++r) {
        if (b.row_weight[r] <= 0) continue;
        s.feature_loss += st[r];
        s.token_loss += st[rows_ + r];
        s.ranks[r] = int(st[2 * rows_ + r]);
        s.top1 += s.ranks[r] == 0;
        s.valid++;
    }
    if (s.valid) s.feature_loss /= s.valid, s.token_loss /= s.valid;
    return s;
}

std::vector<float> GpuEagleTrainer::predicted_features() const {
    std::vector<float> out(size_t(rows_) * shape_.dim);
    out_->download(out.data(), out.size() * 4);
    return out;
}

}  // namespace medusa::train
