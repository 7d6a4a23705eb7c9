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

void rope_rotate(float* v, int n, int head_dim, int pos, float theta, const float* freq_factors, float position_scale) {
    for (int i = 0; i < n; i += 2) {
        float freq = 1.0f / std::pow(theta, float(i % head_dim) / float(head_dim));
        if (freq_factors) freq /= freq_factors[(i % head_dim) / 2];
        const float angle = float(pos) / position_scale * freq;
        const float c = std::cos(angle), s = std::sin(angle);
        const float v0 = v[i], v1 = v[i + 1];
        v[i] = v0 * c - v1 * s;
        v[i + 1] = v0 * s + v1 * c;
    }
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
    if (const Tensor* f = file.find("rope_freqs")) rope_freqs_ = dequantize(*f);
    for (int l = 0; l < cfg_.n_layers; ++l) {
        const std::string p = "layers." + std::to_string(l) + ".";
        layers_.push_back({dequantize(file.get(p + "attention_norm")), dequantize(file.get(p + "wq")),
                           dequantize(file.get(p + "wk")), dequantize(file.get(p + "wv")),
                           dequantize(file.get(p + "wo")), dequantize(file.get(p + "ffn_norm")),
                           dequantize(file.get(p + "w1")), dequantize(file.get(p + "w2")),
                           dequantize(file.get(p + "w3"))});
        if (cfg_.qkv_bias) {
            layers_.back().bq = dequantize(file.get(p + "bq"));
            layers_.back().bk = dequantize(file.get(p + "bk"));
            layers_.back().bv = dequantize(file.get(p + "bv"));
        }
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
    const int T = block.size(), dim = cfg_.dim, kv_dim = cfg_.kv_dim(), hd = cfg_.head_dim();
    const int hidden_dim = cfg_.hidden_dim;
    std::vector<float> x(size_t(T) * dim), xb(dim), q(size_t(T) * dim), att_out(dim), tmp(dim);
    std::vector<float> hb(hidden_dim), hb2(hidden_dim);
    for (int t = 0; t < T; ++t)
        std::copy_n(&embeddings_[size_t(block.tokens[t]) * dim], dim, &x[size_t(t) * dim]);

    for (int l = 0; l < cfg_.n_layers; ++l) {
        const Layer& L = layers_[l];
        const auto captured = std::find(feature_layers_.begin(), feature_layers_.end(), l);
        if (captured != feature_layers_.end())
            for (int t = 0; t < T; ++t)
                std::copy_n(&x[size_t(t) * dim], dim,
                            &features_[size_t(block.base + t) * feature_dim_ + (captured - feature_layers_.begin()) * dim]);
        auto& kc = key_cache_[l];
        auto& vc = value_cache_[l];
        // q, k, v of every block token first: a token may attend to later-indexed block tokens' keys
        // only through the mask, but all of them must be in the cache before attention runs.
        for (int t = 0; t < T; ++t) {
            const int slot = block.base + t;
            rmsnorm(xb.data(), &x[size_t(t) * dim], L.attention_norm.data(), dim, cfg_.rms_eps);
            matvec(&q[size_t(t) * dim], xb.data(), L.wq.data(), dim, dim);
            matvec(&kc[size_t(slot) * kv_dim], xb.data(), L.wk.data(), dim, kv_dim);
            matvec(&vc[size_t(slot) * kv_dim], xb.data(), L.wv.data(), dim, kv_dim);
            if (cfg_.qkv_bias) {  // Qwen2: biases after the projections, before RoPE
                for (int i = 0; i < dim; ++i) q[size_t(t) * dim + i] += L.bq[i];
                for (int i = 0; i < kv_dim; ++i) kc[size_t(slot) * kv_dim + i] += L.bk[i];
                for (int i = 0; i < kv_dim; ++i) vc[size_t(slot) * kv_dim + i] += L.bv[i];
            }
            const float* factors = rope_freqs_.empty() ? nullptr : rope_freqs_.data();
            rope_rotate(&q[size_t(t) * dim], dim, hd, block.positions[t], cfg_.rope_theta, factors,
                        cfg_.rope_position_scale);
            rope_rotate(&kc[size_t(slot) * kv_dim], kv_dim, hd, block.positions[t], cfg_.rope_theta, factors,
                        cfg_.rope_position_scale);
        }
        for (int t = 0; t < T; ++t) {
            cpu_attention(att_out, {&q[size_t(t) * dim], size_t(dim)}, kc, vc, block, t,
                          {cfg_.n_heads, cfg_.n_kv_heads, hd});
            matvec(tmp.data(), att_out.data(), L.wo.data(), dim, dim);
            for (int i = 0; i < dim; ++i) x[size_t(t) * dim + i] += tmp[i];
        }
        for (int t = 0; t < T; ++t) {
            float* xt = &x[size_t(t) * dim];
            rmsnorm(xb.data(), xt, L.ffn_norm.data(), dim, cfg_.rms_eps);
            matvec(hb.data(), xb.data(), L.w1.data(), dim, hidden_dim);
            matvec(hb2.data(), xb.data(), L.w3.data(), dim, hidden_dim);
            for (int i = 0; i < hidden_dim; ++i) hb[i] = hb[i] / (1.0f + std::exp(-hb[i])) * hb2[i];
            matvec(tmp.data(), hb.data(), L.w2.data(), hidden_dim, dim);
            for (int i = 0; i < dim; ++i) xt[i] += tmp[i];
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
