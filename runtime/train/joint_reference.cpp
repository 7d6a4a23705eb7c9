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
    Vec x, n1, qkv, att, h, n2, gu, a;  // qkv after RoPE
};

}  // namespace

JointReferenceResult joint_forward_backward(const BackboneWeights& base, const std::vector<double>& lora,
                                            const LoraConfig& lc, const MedusaHeads& heads, const JointBatch& b,
                                            bool want_grad) {
    const LlamaConfig& c = base.config;
    const LoraLayout at(c, lc.rank);
    if (lora.size() != at.size()) throw std::invalid_argument("LoRA parameters of the wrong size");
    const int R = b.rows(), D = c.dim, KV = c.kv_dim(), H = c.hidden_dim, V = c.vocab_size, r = lc.rank;
    const int QKV = D + 2 * KV, hd = c.head_dim();
    const double s = lc.scale(), eps = c.rms_eps;
    const ref::AttentionShape ash{R, b.seq_len, c.n_heads, c.n_kv_heads, hd};
    auto A = [&](int l, int t) { return slice(lora, at.a_off(l, t), size_t(r) * at.in(t)); };
    auto B = [&](int l, int t) { return slice(lora, at.b_off(l, t), size_t(r) * at.out(t)); };
    BackboneWeights w = base;  // non-const for lora_target_weight
    auto W = [&](int l, int t) { return to_vec(lora_target_weight(w, l, t)); };

    // The forward, with or without the adapters.
    auto forward = [&](bool with_lora, std::vector<LayerCache>* cache, Vec* final_x, Vec* hidden) {
        auto lin = [&](const Vec& x, int l, int t) {
            return with_lora ? ref::lora_linear(x, W(l, t), A(l, t), B(l, t), R, at.in(t), at.out(t), r, s)
                             : ref::linear(x, W(l, t), {}, R, at.in(t), at.out(t));
        };
        Vec x(size_t(R) * D);
        for (int i = 0; i < R; ++i)
            for (int d = 0; d < D; ++d) x[size_t(i) * D + d] = base.tok_embeddings[size_t(b.tokens[i]) * D + d];
        for (int l = 0; l < c.n_layers; ++l) {
            const auto& L = base.layers[l];
            LayerCache lc_;
            lc_.x = x;
            lc_.n1 = ref::rmsnorm(x, to_vec(L.attention_norm), R, D, eps).y;
            lc_.qkv.assign(size_t(R) * QKV, 0.0);
            put_columns(lc_.qkv, lin(lc_.n1, l, kLoraQ), R, QKV, 0, D);
            put_columns(lc_.qkv, lin(lc_.n1, l, kLoraK), R, QKV, D, KV);
            put_columns(lc_.qkv, lin(lc_.n1, l, kLoraV), R, QKV, D + KV, KV);
            ref::rope(lc_.qkv, R, D + KV, QKV, hd, b.positions, c.rope_theta);
            lc_.att = ref::attention(lc_.qkv, ash);
            lc_.h = x;
            const Vec o = lin(lc_.att, l, kLoraO);
            for (size_t i = 0; i < o.size(); ++i) lc_.h[i] += o[i];
            lc_.n2 = ref::rmsnorm(lc_.h, to_vec(L.ffn_norm), R, D, eps).y;
            lc_.gu.assign(size_t(R) * 2 * H, 0.0);
            put_columns(lc_.gu, lin(lc_.n2, l, kLoraGate), R, 2 * H, 0, H);
            put_columns(lc_.gu, lin(lc_.n2, l, kLoraUp), R, 2 * H, H, H);
            lc_.a = ref::swiglu(lc_.gu, R, H);
            x = lc_.h;
            const Vec down = lin(lc_.a, l, kLoraDown);
            for (size_t i = 0; i < down.size(); ++i) x[i] += down[i];
            if (cache) cache->push_back(std::move(lc_));
        }
        if (final_x) *final_x = x;
        const Vec nf = ref::rmsnorm(x, to_vec(base.norm), R, D, eps).y;
        if (hidden) *hidden = nf;
        return ref::linear(nf, to_vec(base.classifier()), {}, R, D, V);
    };

    JointReferenceResult res;
    res.base_logits = forward(false, nullptr, nullptr, nullptr);
    std::vector<LayerCache> cache;
    Vec xL, nf;
    res.logits = forward(true, &cache, &xL, &nf);
    const Vec rw(b.row_weight.begin(), b.row_weight.end());
    const ref::LossOut ce = ref::soft_cross_entropy(res.logits, res.base_logits, rw, R, V, 1.0);
    const ref::LossOut hp = ref::soft_cross_entropy(res.base_logits, res.base_logits, rw, R, V, 1.0);
    res.kl = ce.loss - hp.loss;

    // Heads on the tuned hidden states; their gradient reaches the backbone through dh.
    Vec d_nf(size_t(R) * D, 0.0);
    for (int k = 0; k < heads.count(); ++k) {
        const std::vector<int> tg(b.head_targets.begin() + size_t(k) * R, b.head_targets.begin() + size_t(k + 1) * R);
        const HeadBatchResult hr = head_forward_backward(heads, k, nf, tg, b.head_scale[k], want_grad);
        res.heads_loss += hr.loss;
        if (!want_grad) continue;
        res.head_grad.push_back(hr.grad);
        for (size_t i = 0; i < d_nf.size(); ++i) d_nf[i] += hr.dh[i];
    }
    if (!want_grad) return res;

    // Backward: classifier (frozen), final norm, then the layers in reverse.
    const ref::LinearGrads gc = ref::linear_backward(nf, to_vec(base.classifier()), ce.grad, R, D, V, false);
    for (size_t i = 0; i < d_nf.size(); ++i) d_nf[i] += gc.dx[i];
    Vec dx = ref::rmsnorm_backward(xL, to_vec(base.norm), d_nf, R, D, eps).dx;
    res.lora_grad.assign(at.size(), 0.0);
    auto lin_back = [&](const Vec& x, const Vec& dy, int l, int t) {
        const ref::LoraGrads g =
            ref::lora_linear_backward(x, W(l, t), A(l, t), B(l, t), dy, R, at.in(t), at.out(t), r, s);
        std::copy(g.da.begin(), g.da.end(), res.lora_grad.begin() + at.a_off(l, t));
        std::copy(g.db.begin(), g.db.end(), res.lora_grad.begin() + at.b_off(l, t));
        return g.dx;
    };
    for (int l = c.n_layers - 1; l >= 0; --l) {
        const LayerCache& lc_ = cache[l];
        const auto& L = base.layers[l];
        Vec dh = dx;  // the residual
        const Vec da = lin_back(lc_.a, dx, l, kLoraDown);
        const Vec dgu = ref::swiglu_backward(lc_.gu, da, R, H);
        Vec dn2 = lin_back(lc_.n2, columns(dgu, R, 2 * H, 0, H), l, kLoraGate);
        const Vec dn2u = lin_back(lc_.n2, columns(dgu, R, 2 * H, H, H), l, kLoraUp);
        for (size_t i = 0; i < dn2.size(); ++i) dn2[i] += dn2u[i];
        const Vec dh2 = ref::rmsnorm_backward(lc_.h, to_vec(L.ffn_norm), dn2, R, D, eps).dx;
        for (size_t i = 0; i < dh.size(); ++i) dh[i] += dh2[i];
        const Vec datt = lin_back(lc_.att, dh, l, kLoraO);
        Vec dqkv = ref::attention_backward(lc_.qkv, datt, ash);
        ref::rope(dqkv, R, D + KV, QKV, hd, b.positions, c.rope_theta, -1.0);
        Vec dn1 = lin_back(lc_.n1, columns(dqkv, R, QKV, 0, D), l, kLoraQ);
        const Vec dk = lin_back(lc_.n1, columns(dqkv, R, QKV, D, KV), l, kLoraK);
        const Vec dv = lin_back(lc_.n1, columns(dqkv, R, QKV, D + KV, KV), l, kLoraV);
        for (size_t i = 0; i < dn1.size(); ++i) dn1[i] += dk[i] + dv[i];
        const Vec dx1 = ref::rmsnorm_backward(lc_.x, to_vec(L.attention_norm), dn1, R, D, eps).dx;
        for (size_t i = 0; i < dx.size(); ++i) dx[i] = dh[i] + dx1[i];
    }
    return res;
}

}  // namespace medusa::train
