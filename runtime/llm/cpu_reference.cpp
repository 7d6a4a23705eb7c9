#include "llm/cpu_reference.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "gpu/device_limits.h"
#include "llm/cpu_attention.h"
#include "model/dequantize.h"

namespace medusa {

void rmsnorm(float* out, const float* x, const float* gain, int n, float eps) {
    float ss = 0;
    for (int i = 0; i < n; ++i) ss += x[i] * x[i];
    const float r = 1.0f / std::sqrt(ss / float(n) + eps);
    for (int i = 0; i < n; ++i) out[i] = gain[i] * (r * x[i]);
}

namespace {

// Eight partial sums: independent additions the compiler keeps in one vector register (a single
// running sum would be a chain of dependent adds, several times slower).
[[gnu::always_inline]] inline void matvec_rows(float* out, const float* x, const float* w, int in, int rows) {
    for (int o = 0; o < rows; ++o) {
        const float* row = w + size_t(o) * in;
        float part[8] = {};
        int i = 0;
        for (; i + 8 <= in; i += 8)
            for (int k = 0; k < 8; ++k) part[k] += row[i + k] * x[i + k];
        float acc = 0;
        for (float p : part) acc += p;
        for (; i < in; ++i) acc += row[i] * x[i];
        out[o] = acc;
    }
}

// The same sums in AVX2 registers where the CPU has them (chosen at run time, not by an ifunc,
// which ThreadSanitizer cannot start with).
[[gnu::target("avx2")]] void matvec_avx2(float* out, const float* x, const float* w, int in, int rows) {
    matvec_rows(out, x, w, in, rows);
}

}  // namespace

void matvec(float* out, const float* x, const float* w, int in, int rows) {
    static const bool avx2 = __builtin_cpu_supports("avx2");
    if (avx2) matvec_avx2(out, x, w, in, rows);
    else matvec_rows(out, x, w, in, rows);
}

void rope_rotate(float* v, int n, int pos, const RopeRotation& r) {
    const int rotated = r.rotated > 0 ? r.rotated : r.head_dim;
    for (int i = 0; i < n; i += 2) {
        const int d = i % r.head_dim;
        if (d >= rotated) continue;
        float freq = 1.0f / std::pow(r.theta, float(d) / float(rotated));
        if (r.factors) freq /= r.factors[d / 2];
        const float angle = float(pos) / r.position_scale * freq;
        const float c = std::cos(angle) * r.attn_factor, s = std::sin(angle) * r.attn_factor;
        const float v0 = v[i], v1 = v[i + 1];
        v[i] = v0 * c - v1 * s;
        v[i + 1] = v0 * s + v1 * c;
    }
}

float gelu_tanh(float x) {
    constexpr float k = 0.7978845608028654f;  // sqrt(2 / pi)
    return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
}

namespace {

// The reference holds every weight as f32 and a cache of every position: refused when that is more
// than the machine's memory, with the context that would fit, rather than ending in std::bad_alloc.
void check_fits_host_memory(const ModelFile& file, const LlamaConfig& c) {
    uint64_t weights = 0;
    for (const Tensor& t : file.tensors) weights += uint64_t(t.numel()) * 4;
    const uint64_t per_position = (2 * uint64_t(c.n_layers) * uint64_t(c.kv_dim()) + uint64_t(c.dim)) * 4;
    const uint64_t memory = uint64_t(::sysconf(_SC_PHYS_PAGES)) * uint64_t(::sysconf(_SC_PAGESIZE));
    const uint64_t need = weights + per_position * uint64_t(c.seq_len);
    if (need <= memory) return;
    const uint64_t fits = memory > weights ? (memory - weights) / per_position / 256 * 256 : 0;
    throw FormatError(file.path + ": the CPU reference needs " + gpu::format_bytes(need) + " for " +
                      std::to_string(c.seq_len) + " positions, more than this machine's " + gpu::format_bytes(memory) +
                      (fits > 0 ? ": use --ctx-size " + std::to_string(fits) + " or less" : ""));
}

}  // namespace

CpuReferenceModel::CpuReferenceModel(const ModelFile& file, int context) : cfg_(file.config) {
    if (context > 0) cfg_.seq_len = context;
    check_fits_host_memory(file, cfg_);
    embeddings_ = dequantize(file.get("tok_embeddings"));
    final_norm_ = dequantize(file.get("norm"));
    classifier_ = cfg_.tied_classifier ? embeddings_ : dequantize(file.get("output"));
    if (const Tensor* f = rope_factor_tensor(file, cfg_.seq_len)) rope_factors_ = dequantize(*f);
    for (int l = 0; l < cfg_.n_layers; ++l) {
        const std::string p = "layers." + std::to_string(l) + ".";
        Layer& L = layers_.emplace_back();
        for (auto [v, name] : {std::pair{&L.attention_norm, "attention_norm"}, {&L.wq, "wq"}, {&L.wk, "wk"},
                               {&L.wv, "wv"}, {&L.wo, "wo"}, {&L.ffn_norm, "ffn_norm"}, {&L.w1, "w1"}, {&L.w2, "w2"},
                               {&L.w3, "w3"}})
            *v = dequantize(file.get(p + name));
        if (cfg_.qkv_bias)
            for (auto [v, name] : {std::pair{&L.bq, "bq"}, {&L.bk, "bk"}, {&L.bv, "bv"}}) *v = dequantize(file.get(p + name));
        if (cfg_.arch.qk_norm)
            for (auto [v, name] : {std::pair{&L.q_norm, "q_norm"}, {&L.k_norm, "k_norm"}}) *v = dequantize(file.get(p + name));
        if (cfg_.arch.post_norms)
            for (auto [v, name] : {std::pair{&L.post_attention_norm, "post_attention_norm"}, {&L.post_ffn_norm, "post_ffn_norm"}})
                *v = dequantize(file.get(p + name));
        L.attention = layer_attention(cfg_, l);
    }
    key_cache_.assign(cfg_.n_layers, std::vector<float>(size_t(cfg_.seq_len) * cfg_.kv_dim()));
    value_cache_ = key_cache_;
    feature_dim_ = cfg_.dim;
    features_.assign(size_t(cfg_.seq_len) * feature_dim_, 0.0f);
}

void CpuReferenceModel::capture_layer_inputs(std::vector<int> layers) {
    for (int l : layers)
        if (l < 0 || l >= cfg_.n_layers) throw std::invalid_argument("no layer " + std::to_string(l) + " to capture");
    if (layers == feature_layers_) return;
    feature_layers_ = std::move(layers);
    contents_.wrote(0, {}, true);  // no slot holds the new feature yet: a prompt is run again whole
    feature_dim_ = feature_layers_.empty() ? cfg_.dim : int(feature_layers_.size()) * cfg_.dim;
    features_.assign(size_t(cfg_.seq_len) * feature_dim_, 0.0f);
}

void CpuReferenceModel::forward(const TokenBlock& block) {
    block.validate(cfg_.seq_len, cfg_.vocab_size);
    const int T = block.size(), dim = cfg_.dim, kv_dim = cfg_.kv_dim(), hd = cfg_.head_dim(), q_dim = cfg_.q_dim();
    const int hidden_dim = cfg_.hidden_dim;
    const ArchitectureFeatures& arch = cfg_.arch;
    std::vector<float> x(size_t(T) * dim), xb(dim), q(size_t(T) * q_dim), att_out(q_dim), tmp(dim);
    std::vector<float> hb(hidden_dim), hb2(hidden_dim);
    for (int t = 0; t < T; ++t)
        for (int i = 0; i < dim; ++i)
            x[size_t(t) * dim + i] = embeddings_[size_t(block.tokens[t]) * dim + i] * arch.embedding_scale;
    // x += post_norm(y): the residual add, through the post-norm where the model has one (Gemma).
    auto add_residual = [&](float* xt, const float* y, const std::vector<float>& post_norm) {
        if (post_norm.empty()) {
            for (int i = 0; i < dim; ++i) xt[i] += y[i];
            return;
        }
        std::vector<float> normed(dim);
        rmsnorm(normed.data(), y, post_norm.data(), dim, cfg_.rms_eps);
        for (int i = 0; i < dim; ++i) xt[i] += normed[i];
    };

    for (int l = 0; l < cfg_.n_layers; ++l) {
        const Layer& L = layers_[l];
        const auto captured = std::find(feature_layers_.begin(), feature_layers_.end(), l);
        if (captured != feature_layers_.end())
            for (int t = 0; t < T; ++t)
                std::copy_n(&x[size_t(t) * dim], dim,
                            &features_[size_t(block.base + t) * feature_dim_ + (captured - feature_layers_.begin()) * dim]);
        auto& kc = key_cache_[l];
        auto& vc = value_cache_[l];
        const RopeRotation rope{hd, arch.rope_dims, L.attention.rope_theta,
                                rope_factors_.empty() ? nullptr : rope_factors_.data(), L.attention.rope_position_scale,
                                arch.rope_attn_factor};
        // q, k, v of every block token first: a token may attend to later-indexed block tokens' keys
        // only through the mask, but all of them must be in the cache before attention runs.
        for (int t = 0; t < T; ++t) {
            const int slot = block.base + t;
            float* qt = &q[size_t(t) * q_dim];
            float* kt = &kc[size_t(slot) * kv_dim];
            float* vt = &vc[size_t(slot) * kv_dim];
            rmsnorm(xb.data(), &x[size_t(t) * dim], L.attention_norm.data(), dim, cfg_.rms_eps);
            matvec(qt, xb.data(), L.wq.data(), dim, q_dim);
            matvec(kt, xb.data(), L.wk.data(), dim, kv_dim);
            matvec(vt, xb.data(), L.wv.data(), dim, kv_dim);
            if (cfg_.qkv_bias) {  // Qwen2: biases after the projections, before RoPE
                for (int i = 0; i < q_dim; ++i) qt[i] += L.bq[i];
                for (int i = 0; i < kv_dim; ++i) kt[i] += L.bk[i];
                for (int i = 0; i < kv_dim; ++i) vt[i] += L.bv[i];
            }
            if (arch.qk_norm) {  // Qwen3, Gemma 3: each head of q and k normalised, before RoPE
                for (int h = 0; h < cfg_.n_heads; ++h) rmsnorm(qt + h * hd, qt + h * hd, L.q_norm.data(), hd, cfg_.rms_eps);
                for (int h = 0; h < cfg_.n_kv_heads; ++h) rmsnorm(kt + h * hd, kt + h * hd, L.k_norm.data(), hd, cfg_.rms_eps);
            }
            rope_rotate(qt, q_dim, block.positions[t], rope);
            rope_rotate(kt, kv_dim, block.positions[t], rope);
        }
        const AttentionHeads heads{cfg_.n_heads, cfg_.n_kv_heads, hd, attention_scale(cfg_), L.attention.window};
        for (int t = 0; t < T; ++t) {
            cpu_attention(att_out, {&q[size_t(t) * q_dim], size_t(q_dim)}, kc, vc, block, t, heads);
            matvec(tmp.data(), att_out.data(), L.wo.data(), q_dim, dim);
            add_residual(&x[size_t(t) * dim], tmp.data(), L.post_attention_norm);
        }
        for (int t = 0; t < T; ++t) {
            float* xt = &x[size_t(t) * dim];
            rmsnorm(xb.data(), xt, L.ffn_norm.data(), dim, cfg_.rms_eps);
            matvec(hb.data(), xb.data(), L.w1.data(), dim, hidden_dim);
            matvec(hb2.data(), xb.data(), L.w3.data(), dim, hidden_dim);
            if (arch.activation == GateActivation::GeluTanh)
                for (int i = 0; i < hidden_dim; ++i) hb[i] = gelu_tanh(hb[i]) * hb2[i];
            else
                for (int i = 0; i < hidden_dim; ++i) hb[i] = hb[i] / (1.0f + std::exp(-hb[i])) * hb2[i];
            matvec(tmp.data(), hb.data(), L.w2.data(), hidden_dim, dim);
            add_residual(xt, tmp.data(), L.post_ffn_norm);
        }
    }
    block_size_ = T;
    contents_.wrote(block.base, block.tokens, block.is_causal());
    hidden_.resize(size_t(T) * dim);
    logits_.resize(size_t(T) * cfg_.vocab_size);
    for (int t = 0; t < T; ++t) {
        rmsnorm(&hidden_[size_t(t) * dim], &x[size_t(t) * dim], final_norm_.data(), dim, cfg_.rms_eps);
        if (feature_layers_.empty())
            std::copy_n(&hidden_[size_t(t) * dim], dim, &features_[size_t(block.base + t) * dim]);
        matvec(&logits_[size_t(t) * cfg_.vocab_size], &hidden_[size_t(t) * dim], classifier_.data(), dim,
               cfg_.vocab_size);
    }
}

void CpuReferenceModel::keep_path(int base, std::span<const int> path, std::span<const int> tokens) {
    const size_t kv = cfg_.kv_dim();
    for (int l = 0; l < cfg_.n_layers; ++l)
        for (size_t d = 1; d < path.size(); ++d)
            for (auto* cache : {&key_cache_[l], &value_cache_[l]})
                std::copy_n(&(*cache)[(base + path[d]) * kv], kv, &(*cache)[(base + d) * kv]);
    const size_t fd = feature_dim_;
    for (size_t d = 1; d < path.size(); ++d)
        std::copy_n(&features_[(base + path[d]) * fd], fd, &features_[(base + d) * fd]);
    contents_.wrote(base, tokens, true);
}

std::span<const float> CpuReferenceModel::logits(int t) {
    return {&logits_[size_t(t) * cfg_.vocab_size], size_t(cfg_.vocab_size)};
}

std::span<const float> CpuReferenceModel::feature(int slot) const {
    return {&features_.at(size_t(slot) * feature_dim_), size_t(feature_dim_)};
}

std::span<const float> CpuReferenceModel::hidden(int t) const {
    return {&hidden_[size_t(t) * cfg_.dim], size_t(cfg_.dim)};
}

int CpuReferenceModel::argmax(int t) {
    auto l = logits(t);
    // NaN logits have no argmax: -1, as the GPU's argmax gives, for the verifier to report.
    if (std::any_of(l.begin(), l.end(), [](float x) { return std::isnan(x); })) return -1;
    return int(std::max_element(l.begin(), l.end()) - l.begin());
}

}  // namespace medusa
