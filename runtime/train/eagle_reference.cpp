#include "train/eagle_reference.h"

#include "train/backward_reference.h"

namespace medusa::train {

using ref::Vec;

namespace {
Vec as_double(const std::vector<float>& v) { return Vec(v.begin(), v.end()); }
Vec concat(std::initializer_list<const std::vector<float>*> parts) {
    Vec out;
    for (const auto* p : parts) out.insert(out.end(), p->begin(), p->end());
    return out;
}
std::vector<float> as_float(Vec::const_iterator a, Vec::const_iterator b) { return std::vector<float>(a, b); }
void add(Vec& a, const Vec& b) {
    for (size_t i = 0; i < a.size(); ++i) a[i] += b[i];
}
}  // namespace

EagleReferenceResult eagle_forward_backward(const EagleLayer& L, const std::vector<float>& lm_head, int vocab,
                                            const EagleBatch& b, const EagleLossWeights& w, bool want_grad) {
    const int R = b.rows, d = L.dim, kv = L.kv_dim(), hid = L.hidden_dim, qkv_w = d + 2 * kv;
    const ref::AttentionShape shape{R, b.seq_len, L.n_heads, L.n_kv_heads, L.head_dim()};
    const Vec in = as_double(b.input), target = as_double(b.target), row_w = as_double(b.row_weight);
    const Vec lm = as_double(lm_head), fc_b = as_double(L.fc_b), gain = as_double(L.post_norm);
    const Vec fc_w = as_double(L.fc_w), w_qkv = concat({&L.wq, &L.wk, &L.wv}), wo = as_double(L.wo);
    const Vec w_gu = concat({&L.w_gate, &L.w_up}), w_down = as_double(L.w_down);

    // Forward.
    const Vec x = ref::linear(in, fc_w, fc_b, R, 2 * d, d);
    Vec qkv = ref::linear(x, w_qkv, {}, R, d, qkv_w);
    ref::rope(qkv, R, d + kv, qkv_w, L.head_dim(), b.positions, L.rope_theta);
    const Vec att = ref::attention(qkv, shape);
    Vec h = ref::linear(att, wo, {}, R, d, d);
    add(h, x);
    const Vec normed = ref::rmsnorm(h, gain, R, d, L.rms_eps).y;
    const Vec gu = ref::linear(normed, w_gu, {}, R, d, 2 * hid);
    const Vec a = ref::swiglu(gu, R, hid);
    Vec out = ref::linear(a, w_down, {}, R, hid, d);
    add(out, h);
    const Vec logits = ref::linear(out, lm, {}, R, d, vocab), target_logits = ref::linear(target, lm, {}, R, d, vocab);
    const ref::LossOut l1 = ref::smooth_l1(out, target, row_w, R, d, w.beta, w.feature);
    const ref::LossOut ce = ref::soft_cross_entropy(logits, target_logits, row_w, R, vocab, w.token);
    EagleReferenceResult res;
    res.feature_loss = l1.loss;
    res.token_loss = ce.loss;
    res.out = out;
    res.rank = ce.rank;
    if (!want_grad) return res;

    // Backward, in reverse.
    Vec d_out = l1.grad;
    add(d_out, ref::linear_backward(out, lm, ce.grad, R, d, vocab, false).dx);  // the LM head stays frozen
    const ref::LinearGrads down = ref::linear_backward(a, w_down, d_out, R, hid, d, false);
    const Vec d_gu = ref::swiglu_backward(gu, down.dx, R, hid);
    const ref::LinearGrads gate_up = ref::linear_backward(normed, w_gu, d_gu, R, d, 2 * hid, false);
    const ref::RmsnormGrads norm = ref::rmsnorm_backward(h, gain, gate_up.dx, R, d, L.rms_eps);
    Vec d_h = d_out;  // the residual
    add(d_h, norm.dx);
    const ref::LinearGrads o_proj = ref::linear_backward(att, wo, d_h, R, d, d, false);
    Vec d_qkv = ref::attention_backward(qkv, o_proj.dx, shape);
    ref::rope(d_qkv, R, d + kv, qkv_w, L.head_dim(), b.positions, L.rope_theta, -1.0);
    const ref::LinearGrads proj = ref::linear_backward(x, w_qkv, d_qkv, R, d, qkv_w, false);
    Vec d_x = d_h;  // the residual
    add(d_x, proj.dx);
    const ref::LinearGrads fc = ref::linear_backward(in, fc_w, d_x, R, 2 * d, d, true);

    EagleLayer& g = res.grad;
    g = L;
    g.source = "gradient";
    g.fc_w = as_float(fc.dw.begin(), fc.dw.end());
    g.fc_b = as_float(fc.db.begin(), fc.db.end());
    const auto q_end = proj.dw.begin() + size_t(d) * d, k_end = q_end + size_t(kv) * d;
    g.wq = as_float(proj.dw.begin(), q_end);
    g.wk = as_float(q_end, k_end);
    g.wv = as_float(k_end, proj.dw.end());
    g.wo = as_float(o_proj.dw.begin(), o_proj.dw.end());
    g.post_norm = as_float(norm.dgain.begin(), norm.dgain.end());
    const auto gate_end = gate_up.dw.begin() + size_t(hid) * d;
    g.w_gate = as_float(gate_up.dw.begin(), gate_end);
    g.w_up = as_float(gate_end, gate_up.dw.end());
    g.w_down = as_float(down.dw.begin(), down.dw.end());
    return res;
}

}  // namespace medusa::train
