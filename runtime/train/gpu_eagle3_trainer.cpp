#include "train/gpu_eagle3_trainer.h"

#include <stdexcept>

#include "train/eagle_flat_params.h"

namespace medusa::train {

using namespace layout;

namespace {
constexpr size_t kSliceAlign = 64;  // floats: 256 bytes

}  // namespace

StepSlices::StepSlices(gpu::Context& ctx, int steps, size_t n, gpu::MemoryKind kind)
    : floats(n), stride((n + kSliceAlign - 1) / kSliceAlign * kSliceAlign) {
    buf = gpu::zeroed_floats(ctx, stride * size_t(steps), kind);
}

GpuEagle3Trainer::GpuEagle3Trainer(gpu::Context& ctx, const EagleLayer& init, const std::vector<float>& target_head,
                                   int sequences, int seq_len, int steps, TrainMatmul matmul)
    : GpuEagleTrainerBase(ctx, init, matmul), seq_len_(seq_len), rows_(sequences * seq_len), steps_(steps) {
    if (!init.eagle3()) throw std::invalid_argument("training-time test trains EAGLE-3 layers");
    if (init.scales_rope())
        throw std::invalid_argument("training a layer with RoPE scaling is not supported: its RoPE is rope_theta's alone");
    if (init.norms_feature())
        throw std::invalid_argument("training a layer with a norm before fc is not supported: fc reads the feature as it is");
    if (sequences < 1 || seq_len < 1 || steps < 1) throw std::invalid_argument("EAGLE-3 training needs a sequence and a step");
    if (target_head.size() != size_t(init.draft_vocab()) * init.dim)
        throw std::invalid_argument("target head of the wrong size for the draft vocabulary");
    for (auto* t : {&shape_.fc_w, &shape_.wq, &shape_.wk, &shape_.wv, &shape_.wo, &shape_.post_norm, &shape_.w_gate,
                    &shape_.w_up, &shape_.w_down, &shape_.input_norm, &shape_.hidden_norm, &shape_.final_norm,
                    &shape_.draft_head})
        t->clear();  // only the sizes are kept on the CPU
    const size_t R = rows_, d = init.dim, kv = init.kv_dim(), hid = init.hidden_dim, V = init.draft_vocab();
    const size_t F = init.feature_dim();
    using gpu::MemoryKind;
    auto slices = [&](int n, size_t floats, MemoryKind kind = MemoryKind::Device) {
        return std::make_unique<StepSlices>(ctx, n, floats, kind);
    };
    target_head_ = gpu::zeroed_floats(ctx, V * d, MemoryKind::Device);
    target_head_->upload(target_head.data(), target_head.size() * 4);
    features_ = gpu::zeroed_floats(ctx, R * F, MemoryKind::Host);
    emb_ = slices(steps, R * d, MemoryKind::Host);
    target_ = slices(steps, R * d, MemoryKind::Host);
    pos_ = slices(steps, R, MemoryKind::Host);
    row_w_ = slices(steps, R, MemoryKind::Host);
    stats_ = slices(steps, 2 * R, MemoryKind::Host);
    hs_ = slices(steps + 1, R * d);
    d_hs_ = slices(steps + 1, R * d);
    ne_ = slices(steps, R * d);
    nh_ = slices(steps, R * d);
    re_ = slices(steps, R);
    rh_ = slices(steps, R);
    qkv_ = slices(steps, R * (d + 2 * kv));
    d_qkv_ = slices(steps, R * (d + 2 * kv));
    att_ = slices(steps, R * d);
    lse_ = slices(steps, R * init.n_heads);
    h_ = slices(steps, R * d);
    normed_ = slices(steps, R * d);
    rstd_ = slices(steps, R);
    gu_ = slices(steps, R * 2 * hid);
    a_ = slices(steps, R * hid);
    fn_ = gpu::zeroed_floats(ctx, R * d, MemoryKind::Device);
    rf_ = gpu::zeroed_floats(ctx, R, MemoryKind::Device);
    d_fn_ = gpu::zeroed_floats(ctx, R * d, MemoryKind::Device);
    d_ne_ = gpu::zeroed_floats(ctx, R * d, MemoryKind::Device);
    d_nh_ = gpu::zeroed_floats(ctx, R * d, MemoryKind::Device);
    allocate_shared_scratch(ctx, R, V);
    record_sequences(ctx);
}

GpuEagle3Trainer::~GpuEagle3Trainer() { seqs_.reset(); }  // its recorded commands before the buffers they name

struct GpuEagle3Trainer::Recording {
    Recording(const GpuEagle3Trainer& t)
        : at(t.shape_), R(t.rows_), d(t.shape_.dim), kv(t.shape_.kv_dim()), hid(t.shape_.hidden_dim),
          V(t.shape_.draft_vocab()), F(t.shape_.feature_dim()), qkv_w(d + 2 * kv), eps(t.shape_.rms_eps),
          params(t.opt_.params()), grads(t.opt_.grads()),
          rope{R, d + kv, qkv_w, uint32_t(t.shape_.head_dim()), t.shape_.rope_theta, 1.0f}, swiglu{R, hid},
          seq_len(uint32_t(t.seq_len_)), heads(uint32_t(t.shape_.n_heads)), kv_heads(uint32_t(t.shape_.n_kv_heads)),
          qkv_stride(uint32_t(t.qkv_->stride)) {}
    const EagleFlatLayout at;
    const uint32_t R, d, kv, hid, V, F, qkv_w;
    const float eps;
    const gpu::Buffer &params, &grads;
    const TrainRopePush rope;
    const TrainSwigluPush swiglu;
    const uint32_t seq_len, heads, kv_heads, qkv_stride;

    Mat par(size_t off, uint32_t in) const { return Mat{params, uint32_t(off), in}; }
    Mat grad(size_t off, uint32_t in) const { return Mat{grads, uint32_t(off), in}; }
    static Mat rows(const gpu::Buffer& b, uint32_t width) { return Mat{b, 0, width}; }
    static Mat step_rows(const StepSlices& sl, int k, uint32_t width) { return Mat{*sl.buf, sl.off(k), width}; }
    TrainRmsnormPush norm(size_t gain, bool accumulate) const {
        return TrainRmsnormPush{R, d, uint32_t(gain), 1, eps, uint32_t(accumulate)};
    }
    TrainTttAttentionPush attention(int k, bool accumulate) const {
        return TrainTttAttentionPush{R, seq_len, heads, kv_heads, qkv_w, uint32_t(k), qkv_stride, uint32_t(accumulate)};
    }
};

void GpuEagle3Trainer::record(gpu::CommandSequence& s, bool backward, bool update) {
    const Recording r(*this);
    const int K = steps_;
    s.begin();
    // Forward, step by step: step 0's residual is fc over the fused feature (or the feature);
    // each step reads [input_norm(e) ; hidden_norm(h)] and returns h + attention + MLP, the next
    // step's h.
    s.stage("forward: unrolled steps");
    if (shape_.fuses())
        k_.linear(s, r.rows(*features_, r.F), r.par(r.at.fc_w, r.F), r.step_rows(*hs_, 0, r.d), r.R, r.F, r.d);
    else
        s.copy(*features_, 0, *hs_->buf, 0, size_t(r.R) * r.d * 4);
    for (int k = 0; k < K; ++k) record_forward(s, r, k);
    // Each step's loss, then its backward, last step first: a step's output gradient is its
    // loss's plus what the next step's residual and hidden_norm sent back. A weight's gradient
    // is written by the last step and added to by the others.
    for (int k = K - 1; k >= 0; --k) {
        const bool acc = k < K - 1;
        record_loss(s, r, k, backward, acc);
        if (backward) record_backward(s, r, k, acc);
    }
    if (backward) {
        if (shape_.fuses())
            k_.linear_dw(s, r.step_rows(*d_hs_, 0, r.d), r.rows(*features_, r.F), r.grad(r.at.fc_w, r.F), r.R, r.F, r.d);
        s.stage("clipping and AdamW");
        opt_.record_update(s, k_, update);
    }
    s.end();
}

void GpuEagle3Trainer::record_forward(gpu::CommandSequence& s, const Recording& r, int k) {
    const auto& at = r.at;
    const uint32_t R = r.R, d = r.d, hid = r.hid, qkv_w = r.qkv_w;
    const gpu::Buffer& params = r.params;
    auto copy = [&](const StepSlices& from, int i, const StepSlices& to, int j) {
        s.copy(*from.buf, size_t(from.off(i)) * 4, *to.buf, size_t(to.off(j)) * 4, size_t(R) * d * 4);
    };
    k_.rmsnorm(s, emb_->at(k), ne_->at(k), re_->at(k), params, r.norm(at.input_norm, false));
    k_.rmsnorm(s, hs_->at(k), nh_->at(k), rh_->at(k), params, r.norm(at.hidden_norm, false));
    k_.linear(s, r.step_rows(*ne_, k, d), r.par(at.qkv, 2 * d), r.step_rows(*qkv_, k, qkv_w), R, d, qkv_w);
    k_.linear(s, r.step_rows(*nh_, k, d), r.par(at.qkv + d, 2 * d), r.step_rows(*qkv_, k, qkv_w), R, d, qkv_w, true);
    k_.rope(s, qkv_->at(k), pos_->at(k), r.rope);
    s.stage("attention");
    k_.ttt_attention(s, *qkv_->buf, att_->at(k), lse_->at(k), r.attention(k, false));
    s.stage("forward: unrolled steps");
    copy(*hs_, k, *h_, k);
    k_.linear(s, r.step_rows(*att_, k, d), r.par(at.wo, d), r.step_rows(*h_, k, d), R, d, d, true);
    k_.rmsnorm(s, h_->at(k), normed_->at(k), rstd_->at(k), params, r.norm(at.post_norm, false));
    k_.linear(s, r.step_rows(*normed_, k, d), r.par(at.gate_up, d), r.step_rows(*gu_, k, 2 * hid), R, d, 2 * hid);
    k_.swiglu(s, gu_->at(k), a_->at(k), r.swiglu);
    copy(*h_, k, *hs_, k + 1);
    k_.linear(s, r.step_rows(*a_, k, hid), r.par(at.w_down, hid), r.step_rows(*hs_, k + 1, d), R, hid, d, true);
}

void GpuEagle3Trainer::record_loss(gpu::CommandSequence& s, const Recording& r, int k, bool backward, bool acc) {
    const auto& at = r.at;
    const uint32_t R = r.R, d = r.d, V = r.V;
    s.stage("draft head and loss");
    k_.rmsnorm(s, hs_->at(k + 1), *fn_, *rf_, r.params, r.norm(at.final_norm, false));
    k_.linear(s, r.rows(*fn_, d), r.par(at.draft_head, d), r.rows(*logits_, V), R, d, V);
    k_.linear(s, r.step_rows(*target_, k, d), r.rows(*target_head_, d), r.rows(*target_logits_, V), R, d, V);
    k_.soft_cross_entropy(s, *logits_, *target_logits_, row_w_->at(k), stats_->at(k), R, {V, 0, R, 1.0f});
    if (!backward) return;
    k_.linear_dw(s, r.rows(*logits_, V), r.rows(*fn_, d), r.grad(at.draft_head, d), R, d, V, acc);
    k_.linear_dx(s, r.rows(*logits_, V), r.par(at.draft_head, d), r.rows(*d_fn_, d), R, d, V);
    k_.rmsnorm_dx(s, hs_->at(k + 1), *d_fn_, *rf_, r.params, d_hs_->at(k + 1), r.norm(at.final_norm, acc));
    k_.rmsnorm_dgain(s, hs_->at(k + 1), *d_fn_, *rf_, r.grads, r.norm(at.final_norm, acc));
}

void GpuEagle3Trainer::record_backward(gpu::CommandSequence& s, const Recording& r, int k, bool acc) {
    const auto& at = r.at;
    const uint32_t R = r.R, d = r.d, hid = r.hid, qkv_w = r.qkv_w;
    const gpu::Buffer &params = r.params, &grads = r.grads;
    s.stage("backward: unrolled steps");
    const Mat d_out = r.step_rows(*d_hs_, k + 1, d);
    k_.linear_dw(s, d_out, r.step_rows(*a_, k, hid), r.grad(at.w_down, hid), R, hid, d, acc);
    k_.linear_dx(s, d_out, r.par(at.w_down, hid), r.rows(*d_a_, hid), R, hid, d);
    k_.swiglu_backward(s, gu_->at(k), *d_a_, *d_gu_, r.swiglu);
    k_.linear_dw(s, r.rows(*d_gu_, 2 * hid), r.step_rows(*normed_, k, d), r.grad(at.gate_up, d), R, d, 2 * hid, acc);
    k_.linear_dx(s, r.rows(*d_gu_, 2 * hid), r.par(at.gate_up, d), r.rows(*d_normed_, d), R, d, 2 * hid);
    s.copy(*d_hs_->buf, size_t(d_hs_->off(k + 1)) * 4, *d_h_, 0, size_t(R) * d * 4);  // the residual
    k_.rmsnorm_dx(s, h_->at(k), *d_normed_, rstd_->at(k), params, *d_h_, r.norm(at.post_norm, true));
    k_.rmsnorm_dgain(s, h_->at(k), *d_normed_, rstd_->at(k), grads, r.norm(at.post_norm, acc));
    k_.linear_dw(s, r.rows(*d_h_, d), r.step_rows(*att_, k, d), r.grad(at.wo, d), R, d, d, acc);
    k_.linear_dx(s, r.rows(*d_h_, d), r.par(at.wo, d), r.rows(*d_att_, d), R, d, d);
    s.stage("attention");
    k_.ttt_attention_backward(s, *qkv_->buf, att_->at(k), lse_->at(k), *d_att_, *d_qkv_->buf, r.attention(k, acc));
    s.stage("backward: unrolled steps");
    TrainRopePush back = r.rope;
    back.direction = -1.0f;
    k_.rope(s, d_qkv_->at(k), pos_->at(k), back);
    const Mat dq = r.step_rows(*d_qkv_, k, qkv_w);
    k_.linear_dw(s, dq, r.step_rows(*ne_, k, d), r.grad(at.qkv, 2 * d), R, d, qkv_w, acc);
    k_.linear_dw(s, dq, r.step_rows(*nh_, k, d), r.grad(at.qkv + d, 2 * d), R, d, qkv_w, acc);
    k_.linear_dx(s, dq, r.par(at.qkv, 2 * d), r.rows(*d_ne_, d), R, d, qkv_w);
    k_.linear_dx(s, dq, r.par(at.qkv + d, 2 * d), r.rows(*d_nh_, d), R, d, qkv_w);
    k_.rmsnorm_dgain(s, emb_->at(k), *d_ne_, re_->at(k), grads, r.norm(at.input_norm, acc));
    s.copy(*d_h_, 0, *d_hs_->buf, size_t(d_hs_->off(k)) * 4, size_t(R) * d * 4);  // the residual
    k_.rmsnorm_dx(s, hs_->at(k), *d_nh_, rh_->at(k), params, d_hs_->at(k), r.norm(at.hidden_norm, true));
    k_.rmsnorm_dgain(s, hs_->at(k), *d_nh_, rh_->at(k), grads, r.norm(at.hidden_norm, acc));
}

void GpuEagle3Trainer::write_inputs(const Eagle3Batch& b, const AdamW& opt, int step) {
    const size_t R = rows_, d = shape_.dim, K = steps_;
    if (b.rows != rows_ || b.seq_len != seq_len_ || b.steps != steps_ ||
        b.features.size() != R * shape_.feature_dim() || b.embeddings.size() != K * R * d ||
        b.target_hidden.size() != K * R * d || b.positions.size() != K * R || b.row_weight.size() != K * R)
        throw std::invalid_argument("an EAGLE-3 batch of the wrong shape for this trainer");
    features_->upload(b.features.data(), b.features.size() * 4);
    for (size_t k = 0; k < K; ++k) {
        emb_->upload(int(k), &b.embeddings[k * R * d]);
        target_->upload(int(k), &b.target_hidden[k * R * d]);
        pos_->upload(int(k), reinterpret_cast<const float*>(&b.positions[k * R]));
        row_w_->upload(int(k), &b.row_weight[k * R]);
    }
    opt_.set_step(opt, step);
}

Eagle3BatchStats GpuEagle3Trainer::read_stats(const Eagle3Batch& b) const {
    Eagle3BatchStats s;
    std::vector<float> st(2 * size_t(rows_));
    for (int k = 0; k < steps_; ++k) {
        stats_->buf->download(st.data(), st.size() * 4, size_t(stats_->off(k)) * 4);
        double loss = 0;
        int valid = 0, top1 = 0;
        for (int r = 0; r < rows_; ++r) {
            const float w = b.row_weight[size_t(k) * rows_ + r];
            if (w <= 0) continue;
            loss += st[r];
            s.weighted_loss += double(w) * st[r];
            top1 += st[rows_ + r] == 0;
            ++valid;
        }
        s.loss.push_back(valid ? loss / valid : 0.0);
        s.rows.push_back(valid);
        s.top1.push_back(top1);
    }
    return s;
}

}  // namespace medusa::train
