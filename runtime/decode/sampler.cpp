#include "decode/sampler.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "llm/softmax.h"

namespace medusa {

int argmax(std::span<const float> v) {
    for (float x : v)
        if (std::isnan(x)) throw NonFiniteLogits();
    return int(std::max_element(v.begin(), v.end()) - v.begin());
}

namespace {
// Positive temperatures below this act as this one: 1/T of a denormal such as 1e-45 is infinite in
// float (the GPU's statistics multiply logits by it), and at 1e-6 the distribution is already the
// argmax's for any logit gap above 1e-4.
constexpr float kMinTemperature = 1e-6f;

SamplingParams with_usable_temperature(SamplingParams p) {
    if (p.temperature > 0 && p.temperature < kMinTemperature) p.temperature = kMinTemperature;
    return p;
}
}  // namespace

Sampler::Sampler(SamplingParams params)
    : params_(with_usable_temperature(params)), state_(params.seed * 0x9E3779B97F4A7C15ull + 1) {}

void Sampler::reseed(uint64_t seed) {
    params_.seed = seed;
    state_ = seed * 0x9E3779B97F4A7C15ull + 1;
}

float Sampler::uniform() {
    // xorshift64*: fast, and the same sequence on every platform for a seed.
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return float((state_ * 0x2545F4914F6CDD1Dull) >> 40) / 16777216.0f;
}

std::vector<float> Sampler::penalized(std::span<const float> raw, std::span<const int> history) const {
    const size_t n = raw.size();
    std::vector<float> logits(raw.begin(), raw.end());
    if (!penalizes()) return logits;
    for (const auto& [token, bias] : params_.logit_bias)
        if (token >= 0 && size_t(token) < n) logits[size_t(token)] += bias;
    const size_t from = history.size() > size_t(std::max(0, params_.repeat_last_n))
                            ? history.size() - size_t(std::max(0, params_.repeat_last_n))
                            : 0;
    // Each recent token's count; the repetition penalty takes each once, however often it occurred
    // (as llama.cpp does), the frequency penalty each time.
    std::vector<int> count(n, 0);
    std::vector<int> recent;
    for (size_t i = from; i < history.size(); ++i) {
        const int t = history[i];
        if (t < 0 || size_t(t) >= n) continue;
        if (count[size_t(t)]++ == 0) recent.push_back(t);
    }
    for (int t : recent) {
        float& l = logits[size_t(t)];
        if (params_.repeat_penalty != 1.0f) l = l > 0 ? l / params_.repeat_penalty : l * params_.repeat_penalty;
        l -= params_.frequency_penalty * float(count[size_t(t)]) + params_.presence_penalty;
    }
    return logits;
}

int Sampler::greedy_token(std::span<const float> raw, std::span<const int> history) const {
    return penalizes() ? argmax(penalized(raw, history)) : argmax(raw);
}

std::vector<float> Sampler::distribution(std::span<const float> raw, std::span<const int> history) const {
    const size_t n = raw.size();
    const std::vector<float> logits = penalized(raw, history);
    if (greedy()) {
        std::vector<float> p(n, 0.0f);
        p[argmax(logits)] = 1.0f;
        return p;
    }
    std::vector<float> p = logits;
    const double sum = softmax(p, params_.temperature);
    if (!std::isfinite(sum) || !(sum > 0)) throw NonFiniteLogits();  // NaN, or +Inf minus +Inf
    if (params_.top_k > 0 && size_t(params_.top_k) < n) {
        std::vector<float> sorted = p;
        std::nth_element(sorted.begin(), sorted.begin() + (params_.top_k - 1), sorted.end(), std::greater<float>());
        const float kth = sorted[params_.top_k - 1];
        // Ties at the k-th value: keep the lowest ids, so exactly k tokens survive.
        int kept_at_kth = 0, above = 0;
        for (float x : p) above += x > kth;
        double kept = 0;
        for (size_t i = 0; i < n; ++i) {
            if (p[i] < kth || (p[i] == kth && above + kept_at_kth++ >= params_.top_k)) p[i] = 0.0f;
            kept += p[i];
        }
        for (auto& x : p) x = float(x / kept);
    }
    if (params_.top_p < 1.0f) {
        std::vector<int> order(n);
        std::iota(order.begin(), order.end(), 0);
        std::sort(order.begin(), order.end(), [&](int a, int b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
        double cum = 0;
        size_t keep = 0;
        while (keep < n && cum < params_.top_p) cum += p[order[keep++]];
        for (size_t k = keep; k < n; ++k) p[order[k]] = 0.0f;
        for (auto& x : p) x = float(x / cum);
    }
    if (params_.min_p > 0.0f) {
        const float floor = params_.min_p * *std::max_element(p.begin(), p.end());
        double kept = 0;
        for (auto& x : p) {
            if (x < floor) x = 0.0f;
            kept += x;
        }
        for (auto& x : p) x = float(x / kept);
    }
    return p;
}

int Sampler::draw(std::span<const float> weights) {
    double total = 0;
    for (float w : weights) total += w;
    const double r = double(uniform()) * total;
    double cum = 0;
    int last = 0;
    for (size_t i = 0; i < weights.size(); ++i) {
        if (weights[i] <= 0) continue;
        cum += weights[i];
        last = int(i);
        if (r < cum) return int(i);
    }
    return last;  // rounding left r just past the total
}

int Sampler::sample(std::span<const float> logits, std::span<const int> history) {
    if (greedy() && !penalizes()) return argmax(logits);
    auto p = distribution(logits, history);
    return greedy() ? argmax(p) : draw(p);
}

}  // namespace medusa
