#include "llm/eagle_layer.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "llm/cpu_attention.h"
#include "llm/cpu_reference.h"
#include "model/dequantize.h"

namespace medusa {

EagleLayer EagleLayer::init(const LlamaConfig& t, uint64_t seed) {
    EagleLayer e;
    e.dim = t.dim;
    e.hidden_dim = t.hidden_dim;
    e.n_heads = t.n_heads;
    e.n_kv_heads = t.n_kv_heads;
    e.rope_theta = t.rope_theta;
    e.rms_eps = t.rms_eps;
    e.source = "init";
    const size_t d = e.dim, kv = e.kv_dim(), h = e.hidden_dim;
    std::mt19937_64 rng(seed);
    auto random = [&](size_t n, float scale) {
        std::normal_distribution<float> normal(0.0f, scale);
        std::vector<float> v(n);
        for (auto& x : v) x = normal(rng);
        return v;
    };
    e.fc_w.assign(d * 2 * d, 0.0f);
    for (size_t i = 0; i < d; ++i) e.fc_w[i * 2 * d + d + i] = 1.0f;  // f_i passes through
    e.fc_b.assign(d, 0.0f);
    const float s = 0.02f;  // Hugging Face's initializer_range
    e.wq = random(d * d, s);
    e.wk = random(kv * d, s);
    e.wv = random(kv * d, s);
    e.wo = random(d * d, s);
    e.post_norm.assign(d, 1.0f);
    e.w_gate = random(h * d, s);
    e.w_up = random(h * d, s);
    e.w_down = random(d * h, s);
    return e;
}

void EagleLayer::check_fits(const LlamaConfig& t) const {
    auto bad = [&](const std::string& what, int mine, int theirs) {
        throw FormatError(source + ": the EAGLE layer has " + what + " " + std::to_string(mine) +
                          " but the target model has " + std::to_string(theirs));
    };
    if (dim != t.dim) bad("hidden size", dim, t.dim);
    if (n_heads < 1 || dim % n_heads != 0 || head_dim() % 2 != 0)
        throw FormatError(source + ": an EAGLE layer of hidden size " + std::to_string(dim) + " cannot have " +
                          std::to_string(n_heads) + " attention heads");
    if (n_kv_heads < 1 || n_heads % n_kv_heads != 0)
        throw FormatError(source + ": " + std::to_string(n_kv_heads) + " key/value heads do not divide " +
                          std::to_string(n_heads) + " attention heads");
    const size_t d = dim, kv = kv_dim(), h = hidden_dim;
    const bool sizes = fc_w.size() == d * 2 * d && fc_b.size() == d && wq.size() == d * d && wo.size() == d * d &&
                       wk.size() == kv * d && wv.size() == kv * d && post_norm.size() == d &&
                       w_gate.size() == h * d && w_up.size() == h * d && w_down.size() == d * h;
    if (!sizes) throw FormatError(source + ": the EAGLE layer's tensors do not match its configuration");
}

CpuEagleModel::CpuEagleModel(const EagleLayer& layer, const ModelFile& target, int context)
    : layer_(layer), context_(context) {
    layer_.check_fits(target.config);
    embeddings_ = dequantize(target.get("tok_embeddings"));
    classifier_ = dequantize(target.classifier());
    vocab_ = target.config.vocab_size;
    key_cache_.assign(size_t(context) * layer_.kv_dim(), 0.0f);
    value_cache_ = key_cache_;
}

void CpuEagleModel::forward(const TokenBlock& block, std::span<const float> features) {
    block.validate(context_, vocab_);
    const EagleLayer& L = layer_;
    const int T = block.size(), d = L.dim, kv = L.kv_dim(), hd = L.head_dim(), hidden = L.hidden_dim;
    if (features.size() != size_t(T) * d) throw std::invalid_argument("an EAGLE block needs one feature row per token");
    std::vector<float> x(size_t(T) * d), q(size_t(T) * d), in(2 * d), att(d), tmp(d), xb(d), g(hidden), u(hidden);
    // fc over [e(t) ; f], then q, k, v of every token before attention (as the target's forward).
    for (int t = 0; t < T; ++t) {
        std::copy_n(&embeddings_[size_t(block.tokens[t]) * d], d, in.data());
        std::copy_n(&features[size_t(t) * d], d, in.data() + d);
        matvec(&x[size_t(t) * d], in.data(), L.fc_w.data(), 2 * d, d);
        for (int i = 0; i < d; ++i) x[size_t(t) * d + i] += L.fc_b[i];
        const int slot = block.base + t;
        matvec(&q[size_t(t) * d], &x[size_t(t) * d], L.wq.data(), d, d);
        matvec(&key_cache_[size_t(slot) * kv], &x[size_t(t) * d], L.wk.data(), d, kv);
        matvec(&value_cache_[size_t(slot) * kv], &x[size_t(t) * d], L.wv.data(), d, kv);
        rope_rotate(&q[size_t(t) * d], d, hd, block.positions[t], L.rope_theta);
        rope_rotate(&key_cache_[size_t(slot) * kv], kv, hd, block.positions[t], L.rope_theta);
    }
    out_.assign(size_t(T) * d, 0.0f);
    for (int t = 0; t < T; ++t) {
        cpu_attention(att, {&q[size_t(t) * d], size_t(d)}, key_cache_, value_cache_, block, t,
                      {L.n_heads, L.n_kv_heads, hd});
        float* h = &out_[size_t(t) * d];
        matvec(tmp.data(), att.data(), L.wo.data(), d, d);
        for (int i = 0; i < d; ++i) h[i] = x[size_t(t) * d + i] + tmp[i];
        rmsnorm(xb.data(), h, L.post_norm.data(), d, L.rms_eps);
        matvec(g.data(), xb.data(), L.w_gate.data(), d, hidden);
        matvec(u.data(), xb.data(), L.w_up.data(), d, hidden);
        for (int i = 0; i < hidden; ++i) g[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
        matvec(tmp.data(), g.data(), L.w_down.data(), hidden, d);
        for (int i = 0; i < d; ++i) h[i] += tmp[i];
    }
    logits_.assign(size_t(T) * vocab_, 0.0f);
    logits_ready_.assign(T, 0);
}

std::span<const float> CpuEagleModel::output(int t) const {
    return {&out_.at(size_t(t) * layer_.dim), size_t(layer_.dim)};
}

std::span<const float> CpuEagleModel::logits(int t) {
    float* l = &logits_.at(size_t(t) * vocab_);
    if (!logits_ready_[t]) {
        matvec(l, &out_[size_t(t) * layer_.dim], classifier_.data(), layer_.dim, vocab_);
        logits_ready_[t] = 1;
    }
    return {l, size_t(vocab_)};
}

}  // namespace medusa
