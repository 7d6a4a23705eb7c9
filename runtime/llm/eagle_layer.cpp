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

std::vector<int> eagle3_default_layers(int target_layers) {
    std::vector<int> layers;
    for (int l = 0; l < target_layers; ++l)
        if (l == 2 || l == target_layers / 2 || l == target_layers - 3) layers.push_back(l);
    return layers;
}

EagleLayer EagleLayer::init_eagle3(const LlamaConfig& t, std::vector<int> layers, std::vector<int> draft_to_target,
                                   std::span<const float> final_norm, std::span<const float> classifier, uint64_t seed) {
    EagleLayer e = init(t, seed);
    e.version = EagleVersion::Eagle3;
    e.target_layers = std::move(layers);
    e.draft_to_target = std::move(draft_to_target);
    e.target_vocab = t.vocab_size;
    const size_t d = e.dim, kv = e.kv_dim(), n = e.target_layers.size();
    if (final_norm.size() != d || classifier.size() != size_t(t.vocab_size) * d)
        throw std::invalid_argument("the target's final norm or classifier of the wrong size");
    std::mt19937_64 rng(seed ^ 0xE3E3E3E3ull);
    auto random = [&](size_t count) {
        std::normal_distribution<float> normal(0.0f, 0.02f);
        std::vector<float> v(count);
        for (auto& x : v) x = normal(rng);
        return v;
    };
    e.fc_w.clear();
    e.applies_fc = n > 1;
    if (n > 1) {
        e.fc_w.assign(d * n * d, 0.0f);
        for (size_t i = 0; i < d; ++i)
            for (size_t l = 0; l < n; ++l) e.fc_w[i * n * d + l * d + i] = 1.0f / float(n);
    }
    e.fc_b.clear();
    e.wq = random(d * 2 * d);
    e.wk = random(kv * 2 * d);
    e.wv = random(kv * 2 * d);
    e.input_norm.assign(d, 1.0f);
    e.hidden_norm.assign(d, 1.0f);
    e.final_norm.assign(final_norm.begin(), final_norm.end());
    e.draft_head.clear();
    for (int to : e.draft_to_target) {
        if (to < 0 || to >= t.vocab_size) throw std::invalid_argument("a draft token outside the target vocabulary");
        e.draft_head.insert(e.draft_head.end(), classifier.begin() + size_t(to) * d, classifier.begin() + size_t(to + 1) * d);
    }
    e.check_fits(t);
    return e;
}

void EagleLayer::check_fits(const LlamaConfig& t) const {
    auto bad = [&](const std::string& what, int mine, int theirs) {
        throw FormatError(source + ": the EAGLE layer has " + what + " " + std::to_string(mine) +
                          " but the target model has " + std::to_string(theirs));
    };
    if (dim != t.dim) bad("hidden size", dim, t.dim);
    if (n_heads < 1 || (head_size == 0 && dim % n_heads != 0) || head_size < 0 || head_dim() % 2 != 0)
        throw FormatError(source + ": an EAGLE layer of hidden size " + std::to_string(dim) + " cannot have " +
                          std::to_string(n_heads) + " attention heads");
    if (n_kv_heads < 1 || n_heads % n_kv_heads != 0)
        throw FormatError(source + ": " + std::to_string(n_kv_heads) + " key/value heads do not divide " +
                          std::to_string(n_heads) + " attention heads");
    if (!rope_freqs.empty() && rope_freqs.size() != size_t(head_dim() / 2))
        throw FormatError(source + ": " + std::to_string(rope_freqs.size()) + " RoPE frequency factors for heads of " +
                          std::to_string(head_dim()) + " (" + std::to_string(head_dim() / 2) + " frequencies)");
    for (float f : rope_freqs)
        if (!(f > 0.0f && std::isfinite(f))) throw FormatError(source + ": a RoPE frequency factor is not a positive number");
    if (!(rope_position_scale > 0.0f && std::isfinite(rope_position_scale)))
        throw FormatError(source + ": the RoPE position scale is not a positive number");
    const size_t d = dim, kv = kv_dim(), h = hidden_dim, in = attention_input(), q = q_dim();
    bool sizes = wq.size() == q * in && wo.size() == d * q && wk.size() == kv * in && wv.size() == kv * in &&
                 post_norm.size() == d && w_gate.size() == h * d && w_up.size() == h * d && w_down.size() == d * h;
    if (eagle3()) {
        if (target_layers.empty()) throw FormatError(source + ": an EAGLE-3 layer names no target layers");
        for (size_t i = 0; i < target_layers.size(); ++i)
            if (target_layers[i] < 0 || target_layers[i] >= t.n_layers ||
                std::count(target_layers.begin(), target_layers.end(), target_layers[i]) > 1)
                throw FormatError(source + ": target layer " + std::to_string(target_layers[i]) +
                                  " is not a layer of the target model (layers 0 to " + std::to_string(t.n_layers - 1) +
                                  ", each once)");
        if (target_vocab != 0 && target_vocab != t.vocab_size)
            bad("target vocabulary", target_vocab, t.vocab_size);
        if (draft_to_target.empty() || draft_vocab() > t.vocab_size)
            throw FormatError(source + ": a draft vocabulary of " + std::to_string(draft_vocab()) +
                              " tokens does not fit the target's " + std::to_string(t.vocab_size));
        std::vector<int> drafted_by(size_t(t.vocab_size), -1);
        for (size_t i = 0; i < draft_to_target.size(); ++i) {
            const int to = draft_to_target[i];
            if (to < 0 || to >= t.vocab_size)
                throw FormatError(source + ": d2t maps draft token " + std::to_string(i) + " to " + std::to_string(to) +
                                  ", outside the target vocabulary (0 to " + std::to_string(t.vocab_size - 1) + ")");
            if (drafted_by[to] >= 0)
                throw FormatError(source + ": d2t maps draft tokens " + std::to_string(drafted_by[to]) + " and " +
                                  std::to_string(i) + " both to target token " + std::to_string(to));
            drafted_by[to] = int(i);
        }
        sizes = sizes && fc_w.size() == (fuses() ? d * size_t(feature_dim()) : 0) &&
                feature_norm.size() == (norms_feature() && fuses() ? size_t(feature_dim()) : 0) &&
                (fuses() || target_layers.size() == 1) && fc_b.empty() &&
                input_norm.size() == d && hidden_norm.size() == d && final_norm.size() == d &&
                draft_head.size() == size_t(draft_vocab()) * d;
    } else {
        sizes = sizes && fc_w.size() == d * 2 * d && fc_b.size() == d;
    }
    if (!sizes) throw FormatError(source + ": the EAGLE layer's tensors do not match its configuration");
}

std::string EagleLayer::non_finite_note() const {
    for (const std::vector<float>* w : {&fc_w, &fc_b, &wq, &wk, &wv, &wo, &post_norm, &w_gate, &w_up, &w_down,
                                        &feature_norm, &input_norm, &hidden_norm, &final_norm, &draft_head, &rope_freqs})
        if (!std::all_of(w->begin(), w->end(), [](float x) { return std::isfinite(x); }))
            return source + ": the EAGLE layer holds NaN or infinite weights";
    return "";
}

CpuEagleModel::CpuEagleModel(const EagleLayer& layer, const ModelFile& target, int context)
    : layer_(layer), context_(context) {
    layer_.check_fits(target.config);
    embeddings_ = input_embeddings(target);
    if (!layer_.eagle3()) classifier_ = dequantize(target.classifier());
    vocab_ = target.config.vocab_size;
    key_cache_.assign(size_t(context) * layer_.kv_dim(), 0.0f);
    value_cache_ = key_cache_;
}

void CpuEagleModel::forward(const TokenBlock& block, std::span<const float> features) {
    block.validate(context_, vocab_);
    const EagleLayer& L = layer_;
    const int T = block.size(), d = L.dim, kv = L.kv_dim(), hd = L.head_dim(), hidden = L.hidden_dim, qd = L.q_dim();
    if (features.size() != size_t(T) * d) throw std::invalid_argument("an EAGLE block needs one feature row per token");
    const int width = L.attention_input();
    std::vector<float> x(size_t(T) * d), q(size_t(T) * qd), in(2 * d), att(qd), tmp(d), xb(d), g(hidden), u(hidden);
    // EAGLE-1/2: x = fc([e(t) ; f]) and attention reads x. EAGLE-3: x = h (the residual) and
    // attention reads [input_norm(e(t)) ; hidden_norm(h)]. Then q, k, v of every token before
    // attention (as the target's forward).
    for (int t = 0; t < T; ++t) {
        const float* e = &embeddings_[size_t(block.tokens[t]) * d];
        const float* f = &features[size_t(t) * d];
        float* xt = &x[size_t(t) * d];
        if (L.eagle3()) {
            std::copy_n(f, d, xt);
            rmsnorm(in.data(), e, L.input_norm.data(), d, L.rms_eps);
            rmsnorm(in.data() + d, f, L.hidden_norm.data(), d, L.rms_eps);
        } else {
            std::copy_n(e, d, in.data());
            std::copy_n(f, d, in.data() + d);
            matvec(xt, in.data(), L.fc_w.data(), 2 * d, d);
            for (int i = 0; i < d; ++i) xt[i] += L.fc_b[i];
        }
        const float* a = L.eagle3() ? in.data() : xt;
        const int slot = block.base + t;
        matvec(&q[size_t(t) * qd], a, L.wq.data(), width, qd);
        matvec(&key_cache_[size_t(slot) * kv], a, L.wk.data(), width, kv);
        matvec(&value_cache_[size_t(slot) * kv], a, L.wv.data(), width, kv);
        const float* factors = L.rope_freqs.empty() ? nullptr : L.rope_freqs.data();
        rope_rotate(&q[size_t(t) * qd], qd, hd, block.positions[t], L.rope_theta, factors, L.rope_position_scale);
        rope_rotate(&key_cache_[size_t(slot) * kv], kv, hd, block.positions[t], L.rope_theta, factors,
                    L.rope_position_scale);
    }
    out_.assign(size_t(T) * d, 0.0f);
    for (int t = 0; t < T; ++t) {
        cpu_attention(att, {&q[size_t(t) * qd], size_t(qd)}, key_cache_, value_cache_, block, t,
                      {L.n_heads, L.n_kv_heads, hd});
        float* h = &out_[size_t(t) * d];
        matvec(tmp.data(), att.data(), L.wo.data(), qd, d);
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

void CpuEagleModel::fuse(std::span<const float> feature, float* row) const {
    const EagleLayer& L = layer_;
    if (feature.size() != size_t(L.feature_dim())) throw std::invalid_argument("an EAGLE feature of the wrong width");
    if (!L.fuses()) {
        std::copy_n(feature.data(), L.dim, row);
    } else if (L.norms_feature()) {
        std::vector<float> normed(feature.size());
        rmsnorm(normed.data(), feature.data(), L.feature_norm.data(), L.feature_dim(), L.rms_eps);
        matvec(row, normed.data(), L.fc_w.data(), L.feature_dim(), L.dim);
    } else {
        matvec(row, feature.data(), L.fc_w.data(), L.feature_dim(), L.dim);
    }
}

std::span<const float> CpuEagleModel::logits(int t) {
    float* l = &logits_.at(size_t(t) * vocab_);
    if (!logits_ready_[t]) {
        const EagleLayer& L = layer_;
        const float* out = &out_[size_t(t) * L.dim];
        if (L.eagle3()) {
            std::vector<float> normed(L.dim), draft(L.draft_vocab());
            rmsnorm(normed.data(), out, L.final_norm.data(), L.dim, L.rms_eps);
            matvec(draft.data(), normed.data(), L.draft_head.data(), L.dim, L.draft_vocab());
            std::fill_n(l, vocab_, -INFINITY);
            for (int i = 0; i < L.draft_vocab(); ++i) l[L.draft_to_target[i]] = draft[i];
        } else {
            matvec(l, out, classifier_.data(), L.dim, vocab_);
        }
        logits_ready_[t] = 1;
    }
    return {l, size_t(vocab_)};
}

}  // namespace medusa
