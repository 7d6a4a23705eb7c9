// Turns logits into a token: argmax at temperature 0, else temperature + top-k + top-p (nucleus)
// + min-p sampling with a seeded generator, so a seed always gives the same text. Logit biases, a
// repetition penalty (llama.cpp's) and frequency and presence penalties (OpenAI's) reshape the
// logits first, at any temperature.
#pragma once
#include <cstdint>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

namespace medusa {

// NaN logits (from NaN or Inf weights) have no argmax and no distribution: decoding stops here
// instead of emitting a token id of -1 or garbage. Callers prefix the model file's name.
struct NonFiniteLogits : std::runtime_error {
    NonFiniteLogits() : std::runtime_error("the model produced NaN/Inf logits (non-finite weights?)") {}
};

struct SamplingParams {
    float temperature = 0.8f;
    float top_p = 0.95f;  // 1 disables the nucleus cut
    uint64_t seed = 0;
    int top_k = 0;                 // 0 disables the cut to the k most likely tokens
    float repeat_penalty = 1.0f;   // 1 disables: a recent token's logit is divided (>0) or multiplied (<0) by it
    int repeat_last_n = 64;        // how many of the latest tokens count as recent
    float min_p = 0.0f;            // 0 disables: tokens less likely than min_p times the likeliest one are cut
    // OpenAI's penalties over the same recent tokens: a token's logit less frequency_penalty times
    // its count there, and less presence_penalty once if it is there at all. 0 disables.
    float frequency_penalty = 0.0f, presence_penalty = 0.0f;
    // Added to a token's logit before anything else (OpenAI's logit_bias): (token, bias) pairs.
    std::vector<std::pair<int, float>> logit_bias;
    bool operator==(const SamplingParams&) const = default;
};

class Sampler {
public:
    explicit Sampler(SamplingParams params);
    // `history`: the tokens so far (prompt included), for the repetition penalty.
    int sample(std::span<const float> logits, std::span<const int> history = {});
    // The distribution sample() draws from: the penalised logits' softmax(logits / T), cut to the
    // top-k, then the top-p nucleus, then to the tokens at least min_p times as likely as the
    // likeliest, and renormalised (one-hot at the argmax when T == 0).
    std::vector<float> distribution(std::span<const float> logits, std::span<const int> history = {}) const;
    // The greedy choice: the argmax of the logits after the repetition penalty.
    int greedy_token(std::span<const float> logits, std::span<const int> history = {}) const;
    // Whether the token depends on more than the logits' argmax at T == 0 (a penalty or a bias).
    bool penalizes() const {
        return params_.repeat_penalty != 1.0f || params_.frequency_penalty != 0.0f || params_.presence_penalty != 0.0f ||
               !params_.logit_bias.empty();
    }
    // Draws an index from a (not necessarily normalised) non-negative weight vector.
    int draw(std::span<const float> weights);
    float uniform();  // in [0, 1)
    // Restarts the random stream (the shaping stays).
    void reseed(uint64_t seed);
    bool greedy() const { return params_.temperature <= 0.0f; }
    const SamplingParams& params() const { return params_; }

private:
    std::vector<float> penalized(std::span<const float> logits, std::span<const int> history) const;
    SamplingParams params_;
    uint64_t state_;
};

// Throws NonFiniteLogits when a value is NaN.
int argmax(std::span<const float> values);

}  // namespace medusa
