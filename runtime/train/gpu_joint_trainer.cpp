#include "train/gpu_joint_trainer.h"

#include <stdexcept>

namespace medusa::train {

using namespace layout;

namespace {

Mat whole(const gpu::Buffer& b, uint32_t width) { return Mat{b, 0, width}; }

}  // namespace

GpuJointTrainer::GpuJointTrainer(gpu::Context& ctx, const BackboneWeights& base, const LoraConfig& lc,
                                 const std::vector<float>& lora_init, const MedusaHeads& heads_init, int sequences,
                                 int seq_len, TrainMatmul matmul)
    : cfg_(base.config), lc_(lc), at_(base.config, lc.rank), shape_(heads_init), seq_len_(seq_len),
      rows_(sequences * seq_len), k_(ctx, base.config.head_dim(), matmul), lora_(ctx, lora_init),
      heads_(ctx, pack_heads(heads_init), heads_init.count()),
      head_pass_(ctx, heads_init.count(), heads_init.dim, heads_init.vocab, heads_init.layers, sequences * seq_len),
      embeddings_(base.tok_embeddings) {
    if (sequences < 1 || seq_len < 1) throw std::invalid_argument("joint training needs at least one sequence");
    if (lora_init.size() != at_.size()) throw std::invalid_argument("LoRA parameters of the wrong size");
    if (heads_.size() != head_pass_.size() || heads_init.dim != cfg_.dim || heads_init.vocab != cfg_.vocab_size)
        throw std::invalid_argument("Medusa heads that do not fit the model (a shared classifier must be copied in)");
    for (auto& h : shape_.heads) h = MedusaHead{};  // only the sizes are kept on the CPU
    if (const float scale = cfg_.arch.embedding_scale; scale != 1.0f)  // Gemma's sqrt(dim): the layers' input
        for (float& e : embeddings_) e *= scale;

    // The frozen base: per layer the norms, q|k|v stacked (and their biases and head norms), o,
    // gate|up stacked, down; then the final norm, the classifier and the RoPE factors.
    std::vector<float> w;
    auto put = [&](std::initializer_list<const std::vector<float>*> parts) {
        const uint32_t at = uint32_t(w.size());
        for (const auto* p : parts) w.insert(w.end(), p->begin(), p->end());
        return at;
    };
    for (const auto& L : base.layers) {
        off_.attn_norm.push_back(put({&L.attention_norm}));
        off_.wqkv.push_back(put({&L.wq, &L.wk, &L.wv}));
        off_.bqkv.push_back(put({&L.bq, &L.bk, &L.bv}));
        off_.q_norm.push_back(put({&L.q_norm}));
        off_.k_norm.push_back(put({&L.k_norm}));
        off_.wo.push_back(put({&L.wo}));
        off_.post_attn_norm.push_back(put({&L.post_attention_norm}));
        off_.ffn_norm.push_back(put({&L.ffn_norm}));
        off_.w13.push_back(put({&L.w1, &L.w3}));
        off_.w2.push_back(put({&L.w2}));
        off_.post_ffn_norm.push_back(put({&L.post_ffn_norm}));
    }
    off_.norm = put({&base.norm});
    off_.classifier = put({&base.classifier()});
    off_.rope_factors = put({&base.rope_factors});
    has_factors_ = !base.rope_factors.empty();
    if (w.size() >= (size_t(1) << 32)) throw std::invalid_argument("a backbone of more than 2^32 floats");
    base_ = gpu::zeroed_floats(ctx, w.size());
    base_->upload(w.data(), w.size() * 4);

    const size_t R = rows_, D = cfg_.dim, QD = cfg_.q_dim(), KV = cfg_.kv_dim(), H = cfg_.hidden_dim,
                 V = cfg_.vocab_size, QKV = QD + 2 * KV;
    const size_t K = heads_init.count(), r = lc.rank;
    const bool qk_norm = cfg_.arch.qk_norm, post = cfg_.arch.post_norms;
    using gpu::MemoryKind;
    auto floats = [&](size_t n) { return gpu::zeroed_floats(ctx, n); };
    positions_ = gpu::zeroed_floats(ctx, R, MemoryKind::Host);
    row_w_ = gpu::zeroed_floats(ctx, R, MemoryKind::Host);
    targets_ = gpu::zeroed_floats(ctx, K * R, MemoryKind::Host);
    stats_ = gpu::zeroed_floats(ctx, 4 * R, MemoryKind::Host);
    head_stats_ = gpu::zeroed_floats(ctx, K * R * 2, MemoryKind::Host);
    for (int l = 0; l < cfg_.n_layers; ++l) {
        LayerActs a;
        a.x = gpu::zeroed_floats(ctx, R * D, l == 0 ? MemoryKind::Host : MemoryKind::Device);  // layer 0's: the embeddings
        a.n1 = floats(R * D), a.r1 = floats(R), a.qkv = floats(R * QKV);
        if (qk_norm) a.qkv_raw = floats(R * QKV), a.rq = floats(R * cfg_.n_heads), a.rk = floats(R * cfg_.n_kv_heads);
        a.att = floats(R * QD), a.lse = floats(R * cfg_.n_heads), a.h = floats(R * D);
        if (post) a.o = floats(R * D), a.ro = floats(R), a.down = floats(R * D), a.rd = floats(R);
        a.n2 = floats(R * D), a.r2 = floats(R), a.gu = floats(R * 2 * H), a.a = floats(R * H);
        acts_.push_back(std::move(a));
    }
    x_final_ = floats(R * D), nf_ = floats(R * D), rf_ = floats(R);
    logits_ = floats(R * V), base_logits_ = floats(R * V), self_logits_ = floats(R * V);
    lora_u_ = floats(size_t(cfg_.n_layers) * kLoraTargets * R * r);
    lora_t_ = floats(R * r), lora_du_ = floats(R * r), lora_dt_ = floats(R * r);
    d_x_ = floats(R * D), d_h_ = floats(R * D), d_a_ = floats(R * H), d_gu_ = floats(R * 2 * H);
    d_n_ = floats(R * D), d_att_ = floats(R * QD), d_qkv_ = floats(R * QKV);
    d_nf_ = floats(R * D);
    if (qk_norm) d_qkv_raw_ = floats(R * QKV);
    if (post) d_y_ = floats(R * D), post_ = floats(R * D);
    seqs_ = std::make_unique<StepSequences>(ctx, /*timed=*/true,
                                            [this](gpu::CommandSequence& s, bool backward, bool update) {
                                                record(s, backward, update);
                                            });
}

GpuJointTrainer::~GpuJointTrainer() = default;

// y += (alpha / r) (x A^T) B^T; the scaled rank-r activations are kept for the backward.
void GpuJointTrainer::lora_forward(gpu::CommandSequence& s, int l, int t, Mat x, Mat y) {
    const uint32_t R = rows_, r = lc_.rank, in = at_.in(t), out = at_.out(t);
    const uint32_t u = uint32_t((size_t(l) * kLoraTargets + t) * R * r);
    const gpu::Buffer& p = lora_.params();
    k_.linear(s, x, Mat{p, uint32_t(at_.a_off(l, t)), in}, whole(*lora_t_, r), R, in, r);
    k_.axpy(s, *lora_t_, *lora_u_, {R * r, 0, u, lc_.scale(), 0.0f});
    k_.linear(s, Mat{*lora_u_, u, r}, Mat{p, uint32_t(at_.b_off(l, t)), r}, y, R, r, out, true);
}

// dB = dy^T u, dA = (scale dy B)^T x, dx += (scale dy B) A.
void GpuJointTrainer::lora_backward(gpu::CommandSequence& s, int l, int t, Mat x, Mat dy, Mat dx) {
    const uint32_t R = rows_, r = lc_.rank, in = at_.in(t), out = at_.out(t);
    const uint32_t u = uint32_t((size_t(l) * kLoraTargets + t) * R * r);
    const uint32_t a_off = uint32_t(at_.a_off(l, t)), b_off = uint32_t(at_.b_off(l, t));
    const gpu::Buffer &p = lora_.params(), &g = lora_.grads();
    k_.linear_dw(s, dy, Mat{*lora_u_, u, r}, Mat{g, b_off, r}, R, r, out);
    k_.linear_dx(s, dy, Mat{p, b_off, r}, whole(*lora_du_, r), R, r, out);
    k_.axpy(s, *lora_du_, *lora_dt_, {R * r, 0, 0, lc_.scale(), 0.0f});
    k_.linear_dw(s, whole(*lora_dt_, r), x, Mat{g, a_off, in}, R, in, r);
    k_.linear_dx(s, whole(*lora_dt_, r), Mat{p, a_off, in}, dx, R, in, r, true);
}

TrainRopePush GpuJointTrainer::rope_push(int l, float direction) const {
    const LayerAttention la = layer_attention(cfg_, l);
    const uint32_t QD = cfg_.q_dim(), KV = cfg_.kv_dim();
    return {uint32_t(rows_), QD + KV, QD + 2 * KV, uint32_t(cfg_.head_dim()), la.rope_theta, direction,
            uint32_t(rotated_dims(cfg_)), la.rope_position_scale, cfg_.arch.rope_attn_factor, uint32_t(has_factors_),
            off_.rope_factors};
}

TrainAttentionPush GpuJointTrainer::attention_push(int l) const {
    return {uint32_t(rows_), uint32_t(seq_len_), uint32_t(cfg_.n_heads), uint32_t(cfg_.n_kv_heads),
            uint32_t(cfg_.q_dim() + 2 * cfg_.kv_dim()), attention_scale(cfg_),
            uint32_t(layer_attention(cfg_, l).window)};
}

// The per-head norm of q (or k): rows*heads rows of the head size, inside the rows of q|k|v. The
// gain offset is the layer's, set by the caller.
TrainRmsnormPush GpuJointTrainer::head_norm_push(bool k, bool accumulate) const {
    const uint32_t heads = uint32_t(k ? cfg_.n_kv_heads : cfg_.n_heads);
    return {uint32_t(rows_) * heads, uint32_t(cfg_.head_dim()), 0, 1, cfg_.rms_eps, uint32_t(accumulate),
            k ? uint32_t(cfg_.q_dim()) : 0u, heads, uint32_t(cfg_.q_dim() + 2 * cfg_.kv_dim())};
}

void GpuJointTrainer::forward(gpu::CommandSequence& s, bool with_lora, const gpu::Buffer& logits) {
    const uint32_t R = rows_, D = cfg_.dim, QD = cfg_.q_dim(), KV = cfg_.kv_dim(), H = cfg_.hidden_dim,
                   V = cfg_.vocab_size;
    const uint32_t QKV = QD + 2 * KV;
    const bool qk_norm = cfg_.arch.qk_norm, post = cfg_.arch.post_norms;
    auto W = [&](uint32_t off, uint32_t in) { return Mat{*base_, off, in}; };
    // dst = base + rmsnorm(y) (a post-norm, Gemma 3) with the row norms kept in r.
    auto add_post_norm = [&](const gpu::Buffer& base, const gpu::Buffer& y, const gpu::Buffer& r, uint32_t gain,
                             const gpu::Buffer& dst) {
        k_.rmsnorm(s, y, *post_, r, *base_, {R, D, gain, 1, cfg_.rms_eps, 0});
        s.copy(base, 0, dst, 0, size_t(R) * D * 4);
        k_.axpy(s, *post_, dst, {R * D, 0, 0, 1.0f, 1.0f});
    };
    for (int l = 0; l < cfg_.n_layers; ++l) {
        const LayerActs& a = acts_[l];
        const gpu::Buffer& out = l + 1 < cfg_.n_layers ? *acts_[l + 1].x : *x_final_;
        const gpu::Buffer& proj = qk_norm ? *a.qkv_raw : *a.qkv;  // q|k|v before the head norms
        k_.rmsnorm(s, *a.x, *a.n1, *a.r1, *base_, {R, D, off_.attn_norm[l], 1, cfg_.rms_eps, 0});
        k_.linear(s, whole(*a.n1, D), W(off_.wqkv[l], D), whole(proj, QKV), R, D, QKV);
        if (with_lora) {
            lora_forward(s, l, kLoraQ, whole(*a.n1, D), Mat{proj, 0, QKV});
            lora_forward(s, l, kLoraK, whole(*a.n1, D), Mat{proj, QD, QKV});
            lora_forward(s, l, kLoraV, whole(*a.n1, D), Mat{proj, QD + KV, QKV});
        }
        if (cfg_.qkv_bias) k_.bias(s, proj, *base_, {R, QKV, QKV, off_.bqkv[l], 0});
        if (qk_norm) {  // each head of q and of k normalised before RoPE; v as it is
            s.copy(proj, 0, *a.qkv, 0, size_t(R) * QKV * 4);
            TrainRmsnormPush q = head_norm_push(false, false), k = head_norm_push(true, false);
            q.gain_off = off_.q_norm[l], k.gain_off = off_.k_norm[l];
            k_.rmsnorm(s, proj, *a.qkv, *a.rq, *base_, q);
            k_.rmsnorm(s, proj, *a.qkv, *a.rk, *base_, k);
        }
        k_.rope(s, *a.qkv, *positions_, *base_, rope_push(l, 1.0f));
        k_.attention(s, *a.qkv, *a.att, *a.lse, attention_push(l));
        if (post) {
            k_.linear(s, whole(*a.att, QD), W(off_.wo[l], QD), whole(*a.o, D), R, QD, D);
            if (with_lora) lora_forward(s, l, kLoraO, whole(*a.att, QD), whole(*a.o, D));
            add_post_norm(*a.x, *a.o, *a.ro, off_.post_attn_norm[l], *a.h);
        } else {
            s.copy(*a.x, 0, *a.h, 0, size_t(R) * D * 4);  // the residual
            k_.linear(s, whole(*a.att, QD), W(off_.wo[l], QD), whole(*a.h, D), R, QD, D, true);
            if (with_lora) lora_forward(s, l, kLoraO, whole(*a.att, QD), whole(*a.h, D));
        }
        k_.rmsnorm(s, *a.h, *a.n2, *a.r2, *base_, {R, D, off_.ffn_norm[l], 1, cfg_.rms_eps, 0});
        k_.linear(s, whole(*a.n2, D), W(off_.w13[l], D), whole(*a.gu, 2 * H), R, D, 2 * H);
        if (with_lora) {
            lora_forward(s, l, kLoraGate, whole(*a.n2, D), Mat{*a.gu, 0, 2 * H});
            lora_forward(s, l, kLoraUp, whole(*a.n2, D), Mat{*a.gu, H, 2 * H});
        }
        k_.swiglu(s, *a.gu, *a.a, {R, H, uint32_t(cfg_.arch.activation == GateActivation::GeluTanh)});
        if (post) {
            k_.linear(s, whole(*a.a, H), W(off_.w2[l], H), whole(*a.down, D), R, H, D);
            if (with_lora) lora_forward(s, l, kLoraDown, whole(*a.a, H), whole(*a.down, D));
            add_post_norm(*a.h, *a.down, *a.rd, off_.post_ffn_norm[l], out);
        } else {
            s.copy(*a.h, 0, out, 0, size_t(R) * D * 4);  // the residual
            k_.linear(s, whole(*a.a, H), W(off_.w2[l], H), whole(out, D), R, H, D, true);
            if (with_lora) lora_forward(s, l, kLoraDown, whole(*a.a, H), whole(out, D));
        }
    }
    k_.rmsnorm(s, *x_final_, *nf_, *rf_, *base_, {R, D, off_.norm, 1, cfg_.rms_eps, 0});
    k_.linear(s, whole(*nf_, D), W(off_.classifier, D), whole(logits, V), R, D, V);
}

void GpuJointTrainer::backward(gpu::CommandSequence& s) {
    const uint32_t R = rows_, D = cfg_.dim, QD = cfg_.q_dim(), KV = cfg_.kv_dim(), H = cfg_.hidden_dim,
                   V = cfg_.vocab_size;
    const uint32_t QKV = QD + 2 * KV;
    const bool qk_norm = cfg_.arch.qk_norm, post = cfg_.arch.post_norms;
    auto W = [&](uint32_t off, uint32_t in) { return Mat{*base_, off, in}; };
    // d_nf holds the heads' gradient; the KL term's arrives through the frozen classifier.
    k_.linear_dx(s, whole(*logits_, V), W(off_.classifier, D), whole(*d_nf_, D), R, D, V, true);
    k_.rmsnorm_dx(s, *x_final_, *d_nf_, *rf_, *base_, *d_x_, {R, D, off_.norm, 1, cfg_.rms_eps, 0});
    for (int l = cfg_.n_layers - 1; l >= 0; --l) {
        const LayerActs& a = acts_[l];
        // d_x: the gradient of the layer's output.
        s.copy(*d_x_, 0, *d_h_, 0, size_t(R) * D * 4);  // the residual
        const gpu::Buffer& d_down = post ? *d_y_ : *d_x_;  // through the FFN's post-norm
        if (post) k_.rmsnorm_dx(s, *a.down, *d_x_, *a.rd, *base_, *d_y_, {R, D, off_.post_ffn_norm[l], 1, cfg_.rms_eps, 0});
        k_.linear_dx(s, whole(d_down, D), W(off_.w2[l], H), whole(*d_a_, H), R, H, D);
        lora_backward(s, l, kLoraDown, whole(*a.a, H), whole(d_down, D), whole(*d_a_, H));
        k_.swiglu_backward(s, *a.gu, *d_a_, *d_gu_, {R, H, uint32_t(cfg_.arch.activation == GateActivation::GeluTanh)});
        k_.linear_dx(s, whole(*d_gu_, 2 * H), W(off_.w13[l], D), whole(*d_n_, D), R, D, 2 * H);
        lora_backward(s, l, kLoraGate, whole(*a.n2, D), Mat{*d_gu_, 0, 2 * H}, whole(*d_n_, D));
        lora_backward(s, l, kLoraUp, whole(*a.n2, D), Mat{*d_gu_, H, 2 * H}, whole(*d_n_, D));
        k_.rmsnorm_dx(s, *a.h, *d_n_, *a.r2, *base_, *d_h_, {R, D, off_.ffn_norm[l], 1, cfg_.rms_eps, 1});
        const gpu::Buffer& d_o = post ? *d_y_ : *d_h_;  // through the attention's post-norm
        if (post) k_.rmsnorm_dx(s, *a.o, *d_h_, *a.ro, *base_, *d_y_, {R, D, off_.post_attn_norm[l], 1, cfg_.rms_eps, 0});
        k_.linear_dx(s, whole(d_o, D), W(off_.wo[l], QD), whole(*d_att_, QD), R, QD, D);
        lora_backward(s, l, kLoraO, whole(*a.att, QD), whole(d_o, D), whole(*d_att_, QD));
        k_.attention_backward(s, *a.qkv, *a.att, *a.lse, *d_att_, *d_qkv_, attention_push(l));
        k_.rope(s, *d_qkv_, *positions_, *base_, rope_push(l, -1.0f));
        const gpu::Buffer& d_proj = qk_norm ? *d_qkv_raw_ : *d_qkv_;  // through the head norms
        if (qk_norm) {
            s.copy(*d_qkv_, 0, *d_qkv_raw_, 0, size_t(R) * QKV * 4);  // v's part
            TrainRmsnormPush q = head_norm_push(false, false), k = head_norm_push(true, false);
            q.gain_off = off_.q_norm[l], k.gain_off = off_.k_norm[l];
            k_.rmsnorm_dx(s, *a.qkv_raw, *d_qkv_, *a.rq, *base_, *d_qkv_raw_, q);
            k_.rmsnorm_dx(s, *a.qkv_raw, *d_qkv_, *a.rk, *base_, *d_qkv_raw_, k);
        }
        k_.linear_dx(s, whole(d_proj, QKV), W(off_.wqkv[l], D), whole(*d_n_, D), R, D, QKV);
        lora_backward(s, l, kLoraQ, whole(*a.n1, D), Mat{d_proj, 0, QKV}, whole(*d_n_, D));
        lora_backward(s, l, kLoraK, whole(*a.n1, D), Mat{d_proj, QD, QKV}, whole(*d_n_, D));
        lora_backward(s, l, kLoraV, whole(*a.n1, D), Mat{d_proj, QD + KV, QKV}, whole(*d_n_, D));
        s.copy(*d_h_, 0, *d_x_, 0, size_t(R) * D * 4);  // the residual
        k_.rmsnorm_dx(s, *a.x, *d_n_, *a.r1, *base_, *d_x_, {R, D, off_.attn_norm[l], 1, cfg_.rms_eps, 1});
    }
}

void GpuJointTrainer::record(gpu::CommandSequence& s, bool backward_pass, bool update) {
    const uint32_t R = rows_, V = cfg_.vocab_size;
    s.begin();
    s.stage("base model forward");
    forward(s, false, *base_logits_);
    s.stage("tuned forward");
    forward(s, true, *logits_);
    s.stage("KL and heads");
    // H(p_base): the base logits against themselves, on a copy (the kernel overwrites its input).
    s.copy(*base_logits_, 0, *self_logits_, 0, size_t(R) * V * 4);
    k_.soft_cross_entropy(s, *self_logits_, *base_logits_, *row_w_, *stats_, R, {V, 2 * R, 3 * R, 0.0f});
    if (!backward_pass) s.copy(*logits_, 0, *self_logits_, 0, size_t(R) * V * 4);  // keep the logits readable
    k_.soft_cross_entropy(s, backward_pass ? *logits_ : *self_logits_, *base_logits_, *row_w_, *stats_, R,
                          {V, 0, R, 1.0f});
    head_pass_.record(s, k_, heads_.params(), heads_.grads(), heads_.step_params(), kHeadLossScales, *nf_, *targets_,
                      *head_stats_, backward_pass, backward_pass ? d_nf_.get() : nullptr);
    if (backward_pass) {
        s.stage("backward");
        backward(s);
        s.stage("clipping and AdamW");
        lora_.record_update(s, k_, update);
        heads_.record_update(s, k_, update);
    }
    s.end();
}

void GpuJointTrainer::write_inputs(const JointBatch& b, const AdamW& lora_opt, const AdamW& heads_opt, int step) {
    const size_t R = rows_, D = cfg_.dim, K = shape_.count();
    if (b.rows() != rows_ || b.seq_len != seq_len_ || b.tokens.size() != R || b.positions.size() != R ||
        b.row_weight.size() != R || b.head_targets.size() != K * R || b.head_scale.size() != K)
        throw std::invalid_argument("a Medusa-2 batch of the wrong shape for this trainer");
    // Sliding windows count rows: a sequence's rows must be consecutive positions.
    if (cfg_.arch.sliding_window > 0)
        for (size_t i = 0; i < R; ++i)
            if (i % seq_len_ > 0 && b.positions[i] != b.positions[i - 1] + 1)
                throw std::invalid_argument("a Medusa-2 batch whose positions skip, for a model with sliding windows");
    std::vector<float> x(R * D);
    for (size_t i = 0; i < R; ++i) {
        const int t = b.tokens[i];
        if (t < 0 || t >= cfg_.vocab_size) throw std::invalid_argument("token id outside the vocabulary");
        std::copy_n(embeddings_.begin() + size_t(t) * D, D, x.begin() + i * D);
    }
    acts_[0].x->upload(x.data(), x.size() * 4);
    positions_->upload(b.positions.data(), R * 4);
    row_w_->upload(b.row_weight.data(), R * 4);
    targets_->upload(b.head_targets.data(), K * R * 4);
    lora_.set_step(lora_opt, step);
    heads_.set_step(heads_opt, step, b.head_scale);
}

JointBatchStats GpuJointTrainer::step(const JointBatch& b, const AdamW& lora_opt, const AdamW& heads_opt, int step,
                                      bool update) {
    write_inputs(b, lora_opt, heads_opt, step);
    seqs_->run_step(update);
    JointBatchStats s = read_stats(b);
    s.lora_grad_norm = lora_.grad_norm();
    s.heads_grad_norm = heads_.grad_norm();
    return s;
}

JointBatchStats GpuJointTrainer::evaluate(const JointBatch& b) {
    write_inputs(b, AdamW{}, AdamW{}, 1);
    seqs_->run_eval();
    return read_stats(b);
}

std::vector<float> GpuJointTrainer::logits(bool base) const {
    std::vector<float> out(size_t(rows_) * cfg_.vocab_size);
    (base ? base_logits_ : logits_)->download(out.data(), out.size() * 4);
    return out;
}

JointBatchStats GpuJointTrainer::read_stats(const JointBatch& b) const {
    const int R = rows_, K = shape_.count();
    std::vector<float> st(4 * size_t(R)), hs(size_t(K) * R * 2);
    stats_->download(st.data(), st.size() * 4);
    head_stats_->download(hs.data(), hs.size() * 4);
    JointBatchStats s;
    for (int r = 0; r < R; ++r) {
        if (b.row_weight[r] <= 0) continue;
        s.kl += double(st[r]) - st[2 * R + r];
        s.agree += st[R + r] == 0;
        s.rows++;
    }
    if (s.rows) s.kl /= s.rows;
    s.head_loss.assign(K, 0), s.head_valid.assign(K, 0), s.head_top1.assign(K, 0);
    for (int k = 0; k < K; ++k) {
        for (int r = 0; r < R; ++r) {
            if (b.head_targets[size_t(k) * R + r] < 0) continue;
            s.head_loss[k] += hs[(size_t(k) * R + r) * 2];
            s.head_top1[k] += hs[(size_t(k) * R + r) * 2 + 1] == 0;
            s.head_valid[k]++;
        }
        if (s.head_valid[k]) s.head_loss[k] /= s.head_valid[k];
    }
    return s;
}

std::vector<float> GpuJointTrainer::lora_flat(int which) const { return lora_.read(OptimizerState::Which(which)); }
void GpuJointTrainer::set_lora_flat(int which, const std::vector<float>& v) {
    lora_.write(OptimizerState::Which(which), v);
}
std::vector<float> GpuJointTrainer::heads_flat(int which) const { return heads_.read(OptimizerState::Which(which)); }
void GpuJointTrainer::set_heads_flat(int which, const std::vector<float>& v) {
    heads_.write(OptimizerState::Which(which), v);
}

MedusaHeads GpuJointTrainer::heads() const {
    MedusaHeads h = shape_;
    h.heads = unpack_heads(heads_flat(0), h.count(), h.layers, h.dim, h.vocab);
    return h;
}

std::vector<gpu::StageTime> GpuJointTrainer::stage_times() const { return seqs_->stage_times(); }

std::vector<MedusaHead> GpuJointTrainer::head_gradients() const {
    return unpack_heads(heads_flat(1), shape_.count(), shape_.layers, shape_.dim, shape_.vocab);
}

}  // namespace medusa::train
