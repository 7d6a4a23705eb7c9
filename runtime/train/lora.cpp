#include "train/lora.h"

#include <cmath>
#include <random>
#include <stdexcept>

namespace medusa::train {

LoraLayout::LoraLayout(const LlamaConfig& c, int rank) : c_(c), rank_(rank) {
    if (rank < 1) throw std::invalid_argument("LoRA needs a rank of at least 1");
    for (int l = 0; l < c.n_layers; ++l)
        for (int t = 0; t < kLoraTargets; ++t) {
            off_.push_back(size_);
            size_ += size_t(rank) * (in(t) + out(t));
        }
}

int LoraLayout::in(int t) const { return t == kLoraDown ? c_.hidden_dim : t == kLoraO ? c_.q_dim() : c_.dim; }

int LoraLayout::out(int t) const {
    switch (t) {
        case kLoraQ: return c_.q_dim();
        case kLoraK:
        case kLoraV: return c_.kv_dim();
        case kLoraGate:
        case kLoraUp: return c_.hidden_dim;
        default: return c_.dim;
    }
}

std::vector<float> init_lora(const LlamaConfig& c, const LoraConfig& lc, uint64_t seed) {
    const LoraLayout at(c, lc.rank);
    std::vector<float> p(at.size(), 0.0f);
    std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 11);
    for (int l = 0; l < c.n_layers; ++l)
        for (int t = 0; t < kLoraTargets; ++t) {
            std::uniform_real_distribution<float> u(-1.0f, 1.0f);
            const float bound = 1.0f / std::sqrt(float(at.in(t)));
            for (size_t i = 0; i < size_t(lc.rank) * at.in(t); ++i) p[at.a_off(l, t) + i] = bound * u(rng);
        }
    return p;
}

std::vector<float>& lora_target_weight(BackboneWeights& w, int layer, int t) {
    BackboneWeights::Layer& L = w.layers.at(layer);
    std::vector<float>* m[kLoraTargets] = {&L.wq, &L.wk, &L.wv, &L.wo, &L.w1, &L.w3, &L.w2};
    return *m[t];
}

BackboneWeights merge_lora(const BackboneWeights& base, const std::vector<float>& lora, const LoraConfig& lc) {
    const LoraLayout at(base.config, lc.rank);
    if (lora.size() != at.size()) throw std::invalid_argument("LoRA parameters of the wrong size for this model");
    BackboneWeights w = base;
    const int r = lc.rank;
    for (int l = 0; l < base.config.n_layers; ++l)
        for (int t = 0; t < kLoraTargets; ++t) {
            std::vector<float>& W = lora_target_weight(w, l, t);
            const float* A = &lora[at.a_off(l, t)];
            const float* B = &lora[at.b_off(l, t)];
            const int in = at.in(t), out = at.out(t);
            for (int o = 0; o < out; ++o)
                for (int i = 0; i < in; ++i) {
                    double s = 0;
                    for (int j = 0; j < r; ++j) s += double(B[size_t(o) * r + j]) * A[size_t(j) * in + i];
                    W[size_t(o) * in + i] += float(lc.scale() * s);
                }
        }
    return w;
}

}  // namespace medusa::train
