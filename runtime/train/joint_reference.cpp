#include "train/joint_reference.h"

#include <stdexcept>

#include "train/backward_reference.h"
#include "train/head_reference.h"

namespace medusa::train {

namespace {

using ref::Vec;

Vec to_vec(const std::vector<float>& v) { return Vec(v.begin(), v.end()); }
Vec slice(const std::vector<double>& v, size_t off, size_t n) { return Vec(v.begin() + off, v.begin() + off + n); }

// Columns [c0, c0 + w) of a row-major (rows, stride) matrix, and the reverse.
Vec columns(const Vec& m, int rows, int stride, int c0, int w) {
    Vec out(size_t(rows) * w);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < w; ++c) out[size_t(r) * w + c] = m[size_t(r) * stride + c0 + c];
    return out;
}
void put_columns(Vec& m, const Vec& part, int rows, int stride, int c0, int w) {
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < w; ++c) m[size_t(r) * stride + c0 + c] = part[size_t(r) * w + c];
}

struct LayerCache {
    Vec x, n1, qkv_raw, qkv, att, o, h, n2, gu, a, down;  // qkv_raw: projected (+ biases); qkv: normed, rotated
};

// RMSNorm of `heads` heads of hd floats from column c0 of every row of m (stride floats), in place.
void head_norm(Vec& m, int rows, int stride, int c0, int heads, int hd, const Vec& gain, double eps) {
    const Vec y = ref::rmsnorm(columns(m, rows, stride, c0, heads * hd), gain, rows * heads, hd, eps).y;
    put_columns(m, y, rows, stride, c0, heads * hd);
}
// Its backward: d (the normed heads' gradient) becomes the raw heads' (raw: the input).
void head_norm_backward(Vec& d, const Vec& raw, int rows, int stride, int c0, int heads, int hd, const Vec& gain,
                        double eps) {
    const Vec dx = ref::rmsnorm_backward(columns(raw, rows, stride, c0, heads * hd), gain,
                                         columns(d, rows, stride, c0, heads * hd), rows * heads, hd, eps)
                       .dx;
    put_columns(d, dx, rows, stride, c0, heads * hd);
}
Vec plus(Vec a, const Vec& b) {
    for (size_t i = 0; i < a.size(); ++i) a[i] += b[i];
    return a;
}

// The backbone with (or without) the adapters, forward and backward, over one batch: every
// feature of the model's family as llm/cpu_reference.cpp runs it.
class JointPass {
public:
    JointPass(const BackboneWeights& base, const std::vector<double>& lora, const LoraConfig& lc, const JointBatch& b)
        : base_(base), w_(base), lora_(lora), at_(base.config, lc.rank), b_(b), c_(base.config), R(b.rows()),
          D(c_.dim), QD(c_.q_dim()), KV(c_.kv_dim()), H(c_.hidden_dim), V(c_.vocab_size), QKV(QD + 2 * KV),
          HD(c_.head_dim()), r_(lc.rank), s_(lc.scale()), eps_(c_.rms_eps),
          gelu_(c_.arch.activation == GateActivation::GeluTanh) {
        if (lora.size() != at_.size()) throw std::invalid_argument("LoRA parameters of the wrong size");
    }

    // The logits; with `cache`, each layer's activations, the last layer's output and the final
    // norm's (the heads' input).
    Vec forward(bool with_lora, std::vector<LayerCache>* cache, Vec* final_x, Vec* hidden) {
        Vec x(size_t(R) * D);
        for (int i = 0; i < R; ++i)
            for (int d = 0; d < D; ++d)
                x[size_t(i) * D + d] =
                    double(base_.tok_embeddings[size_t(b_.tokens[i]) * D + d]) * c_.arch.embedding_scale;
        for (int l = 0; l < c_.n_layers; ++l) {
            LayerCache layer = layer_forward(x, l, with_lora);
            x = plus(layer.h, post_norm(layer.down, base_.layers[l].post_ffn_norm));
            if (cache) cache->push_back(std::move(layer));
        }
        if (final_x) *final_x = x;
        const Vec nf = ref::rmsnorm(x, to_vec(base_.norm), R, D, eps_).y;
        if (hidden) *hidden = nf;
        return ref::linear(nf, to_vec(base_.classifier()), {}, R, D, V);
    }

    // From d(loss)/d(logits) and d(loss)/d(final norm's output), down through the frozen
    // classifier, the final norm and the layers in reverse: the adapters' gradient.
    std::vector<double> backward(const std::vector<LayerCache>& cache, const Vec& xL, const Vec& nf, const Vec& dlogits,
                                 Vec d_nf) {
        const ref::LinearGrads gc = ref::linear_backward(nf, to_vec(base_.classifier()), dlogits, R, D, V, false);
        for (size_t i = 0; i < d_nf.size(); ++i) d_nf[i] += gc.dx[i];
        Vec dx = ref::rmsnorm_backward(xL, to_vec(base_.norm), d_nf, R, D, eps_).dx;
        grad_.assign(at_.size(), 0.0);
        for (int l = c_.n_layers - 1; l >= 0; --l) dx = layer_backward(cache[l], l, dx);
        return std::move(grad_);
    }

private:
    Vec A(int l, int t) const { return slice(lora_, at_.a_off(l, t), size_t(r_) * at_.in(t)); }
    Vec B(int l, int t) const { return slice(lora_, at_.b_off(l, t), size_t(r_) * at_.out(t)); }
    Vec W(int l, int t) { return to_vec(lora_target_weight(w_, l, t)); }

    ref::RopeSpec rope_spec(int l) const {
        const LayerAttention la = layer_attention(c_, l);
        return {HD, rotated_dims(c_), la.rope_theta, la.rope_position_scale, c_.arch.rope_attn_factor,
                to_vec(base_.rope_factors)};
    }
    ref::AttentionShape attention_shape(int l) const {
        return {R, b_.seq_len, c_.n_heads, c_.n_kv_heads, HD, attention_scale(c_), layer_attention(c_, l).window};
    }
    // y, or its post-norm where the model has one (Gemma 3): what the residual adds.
    Vec post_norm(const Vec& y, const std::vector<float>& gain) const {
        return gain.empty() ? y : ref::rmsnorm(y, to_vec(gain), R, D, eps_).y;
    }
    Vec post_norm_backward(const Vec& y, const std::vector<float>& gain, const Vec& d) const {
        return gain.empty() ? d : ref::rmsnorm_backward(y, to_vec(gain), d, R, D, eps_).dx;
    }

    Vec linear(const Vec& x, int l, int t, bool with_lora) {
        return with_lora ? ref::lora_linear(x, W(l, t), A(l, t), B(l, t), R, at_.in(t), at_.out(t), r_, s_)
                         : ref::linear(x, W(l, t), {}, R, at_.in(t), at_.out(t));
    }
    // The adapters' gradient of linear t of layer l into grad_; returns dx.
    Vec linear_backward(const Vec& x, const Vec& dy, int l, int t) {
        const ref::LoraGrads g =
            ref::lora_linear_backward(x, W(l, t), A(l, t), B(l, t), dy, R, at_.in(t), at_.out(t), r_, s_);
        std::copy(g.da.begin(), g.da.end(), grad_.begin() + at_.a_off(l, t));
        std::copy(g.db.begin(), g.db.end(), grad_.begin() + at_.b_off(l, t));
        return g.dx;
    }
    // A projection of q, k or v with its bias (Qwen2), into its columns of qkv.
    void project(Vec& qkv, const Vec& n1, int l, int t, int c0, const std::vector<float>& bias, bool with_lora) {
        Vec y = linear(n1, l, t, with_lora);
        const int w = at_.out(t);
        if (!bias.empty())
            for (int r = 0; r < R; ++r)
                for (int i = 0; i < w; ++i) y[size_t(r) * w + i] += bias[i];
        put_columns(qkv, y, R, QKV, c0, w);
    }

    // Layer l up to its down projection; h is the residual after attention.
    LayerCache layer_forward(const Vec& x, int l, bool with_lora) {
        const auto& L = base_.layers[l];
        LayerCache lc;
        lc.x = x;
        lc.n1 = ref::rmsnorm(x, to_vec(L.attention_norm), R, D, eps_).y;
        lc.qkv_raw.assign(size_t(R) * QKV, 0.0);
        project(lc.qkv_raw, lc.n1, l, kLoraQ, 0, L.bq, with_lora);
        project(lc.qkv_raw, lc.n1, l, kLoraK, QD, L.bk, with_lora);
        project(lc.qkv_raw, lc.n1, l, kLoraV, QD + KV, L.bv, with_lora);
        lc.qkv = lc.qkv_raw;
        if (c_.arch.qk_norm) {  // each head of q and of k, before RoPE
            head_norm(lc.qkv, R, QKV, 0, c_.n_heads, HD, to_vec(L.q_norm), eps_);
            head_norm(lc.qkv, R, QKV, QD, c_.n_kv_heads, HD, to_vec(L.k_norm), eps_);
        }
        ref::rope(lc.qkv, R, QD + KV, QKV, rope_spec(l), b_.positions);
        lc.att = ref::attention(lc.qkv, attention_shape(l));
        lc.o = linear(lc.att, l, kLoraO, with_lora);
        lc.h = plus(x, post_norm(lc.o, L.post_attention_norm));
        lc.n2 = ref::rmsnorm(lc.h, to_vec(L.ffn_norm), R, D, eps_).y;
        lc.gu.assign(size_t(R) * 2 * H, 0.0);
        put_columns(lc.gu, linear(lc.n2, l, kLoraGate, with_lora), R, 2 * H, 0, H);
        put_columns(lc.gu, linear(lc.n2, l, kLoraUp, with_lora), R, 2 * H, H, H);
        lc.a = ref::swiglu(lc.gu, R, H, gelu_);
        lc.down = linear(lc.a, l, kLoraDown, with_lora);
        return lc;
    }

    // d(loss)/d(layer l's output) -> d(loss)/d(its input).
    Vec layer_backward(const LayerCache& lc, int l, const Vec& dx) {
        const auto& L = base_.layers[l];
        Vec dh = dx;  // the residual
        const Vec ddown = post_norm_backward(lc.down, L.post_ffn_norm, dx);
        const Vec da = linear_backward(lc.a, ddown, l, kLoraDown);
        const Vec dgu = ref::swiglu_backward(lc.gu, da, R, H, gelu_);
        const Vec dn2 = plus(linear_backward(lc.n2, columns(dgu, R, 2 * H, 0, H), l, kLoraGate),
                            linear_backward(lc.n2, columns(dgu, R, 2 * H, H, H), l, kLoraUp));
        dh = plus(dh, ref::rmsnorm_backward(lc.h, to_vec(L.ffn_norm), dn2, R, D, eps_).dx);
        const Vec d_o = post_norm_backward(lc.o, L.post_attention_norm, dh);
        const Vec datt = linear_backward(lc.att, d_o, l, kLoraO);
        Vec dqkv = ref::attention_backward(lc.qkv, datt, attention_shape(l));
        ref::rope(dqkv, R, QD + KV, QKV, rope_spec(l), b_.positions, -1.0);
        if (c_.arch.qk_norm) {
            head_norm_backward(dqkv, lc.qkv_raw, R, QKV, 0, c_.n_heads, HD, to_vec(L.q_norm), eps_);
            head_norm_backward(dqkv, lc.qkv_raw, R, QKV, QD, c_.n_kv_heads, HD, to_vec(L.k_norm), eps_);
        }
        Vec dn1 = linear_backward(lc.n1, columns(dqkv, R, QKV, 0, QD), l, kLoraQ);
        dn1 = plus(dn1, linear_backward(lc.n1, columns(dqkv, R, QKV, QD, KV), l, kLoraK));
        dn1 = plus(dn1, linear_backward(lc.n1, columns(dqkv, R, QKV, QD + KV, KV), l, kLoraV));
        return plus(dh, ref::rmsnorm_backward(lc.x, to_vec(L.attention_norm), dn1, R, D, eps_).dx);
    }

    const BackboneWeights& base_;
    BackboneWeights w_;  // a copy, non-const for lora_target_weight
    const std::vector<double>& lora_;
    const LoraLayout at_;
    const JointBatch& b_;
    const LlamaConfig& c_;
    const int R, D, QD, KV, H, V, QKV, HD, r_;
    const double s_, eps_;
    const bool gelu_;
    std::vector<double> grad_;
};

}  // namespace

JointReferenceResult joint_forward_backward(const BackboneWeights& base, const std::vector<double>& lora,
                                            const LoraConfig& lc, const MedusaHeads& heads, const JointBatch& b,
                                            bool want_grad) {
    JointPass pass(base, lora, lc, b);
    const int R = b.rows(), V = base.config.vocab_size;
    JointReferenceResult res;
    res.base_logits = pass.forward(false, nullptr, nullptr, nullptr);
    std::vector<LayerCache> cache;
    Vec xL, nf;
    res.logits = pass.forward(true, &cache, &xL, &nf);
    const Vec rw(b.row_weight.begin(), b.row_weight.end());
    const ref::LossOut ce = ref::soft_cross_entropy(res.logits, res.base_logits, rw, R, V, 1.0);
    const ref::LossOut hp = ref::soft_cross_entropy(res.base_logits, res.base_logits, rw, R, V, 1.0);
    res.kl = ce.loss - hp.loss;

    // Heads on the tuned hidden states; their gradient reaches the backbone through dh.
    Vec d_nf(nf.size(), 0.0);
    for (int k = 0; k < heads.count(); ++k) {
        const std::vector<int> tg(b.head_targets.begin() + size_t(k) * R, b.head_targets.begin() + size_t(k + 1) * R);
        const HeadBatchResult hr = head_forward_backward(heads, k, nf, tg, b.head_scale[k], want_grad);
        res.heads_loss += hr.loss;
        if (!want_grad) continue;
        res.head_grad.push_back(hr.grad);
        for (size_t i = 0; i < d_nf.size(); ++i) d_nf[i] += hr.dh[i];
    }
    if (want_grad) res.lora_grad = pass.backward(cache, xL, nf, ce.grad, std::move(d_nf));
    return res;
}

}  // namespace medusa::train
