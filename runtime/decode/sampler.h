// Turns logits into a token: argmax at temperature 0, else temperature + top-p (nucleus)
// sampling with a seeded generator, so a seed always gives the same text.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

namespace medusa {

struct SamplingParams {
    float temperature = 0.8f;
    float top_p = 0.95f;  // 1 disables the nucleus cut
    uint64_t seed = 0;
};

class Sampler {
public:
    explicit Sampler(SamplingParams params);
    int sample(std::span<const float> logits);
    // The distribution sample() draws from: softmax(logits / T), cut to the top-p nucleus and
    // renormalised (one-hot at the argmax when T == 0).
    std::vector<float> distribution(std::span<const float> logits) const;
    // Draws an index from a (not necessarily normalised) non-negative weight vector.
    int draw(std::span<const float> weights);
    float uniform();  // in [0, 1)
    bool greedy() const { return params_.temperature <= 0.0f; }
    const SamplingParams& params() const { return params_; }

private:
    SamplingParams params_;
    uint64_t state_;
};

int argmax(std::span<const float> values);

}  // namespace medusa
