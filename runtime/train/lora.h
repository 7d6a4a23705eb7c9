// LoRA adapters on the backbone's seven linears of every layer (q, k, v, o, gate, up, down; q is
// heads x head size wide, o reads as many, which need not be the model's dim):
// y = W x + (alpha / r) B A x with A (r, in) random and B (out, r) zero at the start, so the
// tuned model starts as the base. All adapters live in one flat vector, per layer and target
// A then B; merging folds (alpha / r) B A into W.
#pragma once
#include <cstdint>
#include <vector>

#include "train/backbone_weights.h"

namespace medusa::train {

enum LoraTarget { kLoraQ, kLoraK, kLoraV, kLoraO, kLoraGate, kLoraUp, kLoraDown, kLoraTargets };

struct LoraConfig {
    int rank = 8;
    float alpha = 16.0f;
    float scale() const { return alpha / float(rank); }
};

class LoraLayout {
public:
    LoraLayout(const LlamaConfig& c, int rank);
    int rank() const { return rank_; }
    int in(int t) const;   // input width of target t
    int out(int t) const;  // output width of target t
    size_t a_off(int layer, int t) const { return off_[size_t(layer) * kLoraTargets + t]; }
    size_t b_off(int layer, int t) const { return a_off(layer, t) + size_t(rank_) * in(t); }
    size_t size() const { return size_; }

private:
    LlamaConfig c_;
    int rank_;
    std::vector<size_t> off_;
    size_t size_ = 0;
};

// A uniform in +-1/sqrt(in) (deterministic for `seed`), B zero.
std::vector<float> init_lora(const LlamaConfig& c, const LoraConfig& lc, uint64_t seed);

// The weight matrix (out, in) that target t of `layer` adapts.
std::vector<float>& lora_target_weight(BackboneWeights& w, int layer, int t);

// The base with every adapter folded in: W + (alpha / r) B A.
BackboneWeights merge_lora(const BackboneWeights& base, const std::vector<float>& lora, const LoraConfig& lc);

}  // namespace medusa::train
