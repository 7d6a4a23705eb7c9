// The sampler's distribution against a direct computation of each step: repetition penalty,
// temperature, top-k, top-p.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "decode/sampler.h"
#include "gpu_fixture.h"

using namespace medusa;

namespace {

std::vector<double> softmax(const std::vector<float>& logits, double temperature) {
    const double m = *std::max_element(logits.begin(), logits.end());
    std::vector<double> p(logits.size());
    double z = 0;
    for (size_t i = 0; i < p.size(); ++i) z += p[i] = std::exp((logits[i] - m) / temperature);
    for (auto& x : p) x /= z;
    return p;
}

}  // namespace

TEST_CASE("top-k keeps exactly the k most likely tokens, renormalised", "[sampler]") {
    const auto logits = test::random_floats(300, 3, 4.0f);
    const auto got = Sampler({0.7f, 1.0f, 0, 25}).distribution(logits);
    const auto p = softmax(logits, 0.7);
    std::vector<int> order(p.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return p[a] > p[b]; });
    double kept = 0;
    for (int i = 0; i < 25; ++i) kept += p[order[i]];
    for (size_t r = 0; r < order.size(); ++r) {
        const int t = order[r];
        CAPTURE(r, t);
        CHECK(got[t] == Approx(r < 25 ? p[t] / kept : 0.0).margin(1e-6));
    }
}

TEST_CASE("the repetition penalty divides positive and multiplies negative logits of recent tokens", "[sampler]") {
    std::vector<float> logits = test::random_floats(64, 9, 3.0f);
    logits[5] = 2.0f, logits[6] = -1.5f, logits[7] = 1.0f;
    const std::vector<int> history = {7, 5, 6, 6, 5};  // 7 falls outside the last 4
    const auto got = Sampler({1.0f, 1.0f, 0, 0, 2.0f, 4}).distribution(logits, history);
    auto shaped = logits;
    shaped[5] = 1.0f, shaped[6] = -3.0f;
    const auto want = softmax(shaped, 1.0);
    for (size_t i = 0; i < logits.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(1e-6));
    // At temperature 0 the penalty can change the greedy choice.
    std::vector<float> two = {3.0f, 2.0f};
    Sampler greedy({0.0f, 1.0f, 0, 0, 2.0f, 4});
    CHECK(greedy.sample(two) == 0);
    CHECK(greedy.sample(two, std::vector<int>{0}) == 1);
}

TEST_CASE("logit biases, and frequency and presence penalties over the recent tokens, shape the logits", "[sampler]") {
    std::vector<float> logits = test::random_floats(64, 10, 3.0f);
    SamplingParams p{1.0f, 1.0f, 0};
    p.repeat_last_n = 4;
    p.frequency_penalty = 0.5f, p.presence_penalty = 0.25f;
    p.logit_bias = {{3, 2.0f}, {9, -100.0f}, {500, 7.0f}};  // 500: past the vocabulary, ignored
    const std::vector<int> history = {7, 5, 6, 6, 5};  // 7 falls outside the last 4
    auto shaped = logits;
    shaped[3] += 2.0f, shaped[9] -= 100.0f;
    shaped[5] -= 0.5f * 2 + 0.25f, shaped[6] -= 0.5f * 2 + 0.25f;
    const auto got = Sampler(p).distribution(logits, history);
    const auto want = softmax(shaped, 1.0);
    for (size_t i = 0; i < logits.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(1e-6));
    // At temperature 0 a bias decides the greedy choice, and the sampler says it shapes the logits.
    p.temperature = 0;
    p.frequency_penalty = p.presence_penalty = 0;
    p.logit_bias = {{1, 1.5f}};
    Sampler greedy(p);
    CHECK(greedy.penalizes());
    CHECK(greedy.sample(std::vector<float>{3.0f, 2.0f}) == 1);
    CHECK_FALSE(Sampler(SamplingParams{0.0f, 1.0f, 0}).penalizes());
}

TEST_CASE("top-p keeps the smallest most likely set reaching p", "[sampler]") {
    const std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.15f), std::log(0.05f)};
    const auto got = Sampler({1.0f, 0.75f, 0}).distribution(logits);
    CHECK(got[0] == Approx(0.5 / 0.8).margin(1e-6));
    CHECK(got[1] == Approx(0.3 / 0.8).margin(1e-6));
    CHECK(got[2] == 0.0f);
    CHECK(got[3] == 0.0f);
}

TEST_CASE("min-p keeps the tokens at least min_p times as likely as the likeliest", "[sampler]") {
    const std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.15f), std::log(0.05f)};
    SamplingParams p{1.0f, 1.0f, 0};
    p.min_p = 0.25f;  // the floor: 0.125 of the likeliest 0.5, so 0.15 stays and 0.05 goes
    const auto got = Sampler(p).distribution(logits);
    CHECK(got[0] == Approx(0.5 / 0.95).margin(1e-6));
    CHECK(got[1] == Approx(0.3 / 0.95).margin(1e-6));
    CHECK(got[2] == Approx(0.15 / 0.95).margin(1e-6));
    CHECK(got[3] == 0.0f);
    // After top-k: the floor is the likeliest survivor's, renormalised.
    p.top_k = 2;
    p.min_p = 0.7f;  // 0.7 x 0.625 = 0.4375 > 0.375: only the first is left
    const auto cut = Sampler(p).distribution(logits);
    CHECK(cut[0] == Approx(1.0).margin(1e-6));
    CHECK(cut[1] == 0.0f);
    // Off at 0, and sampling never draws a cut token.
    p = SamplingParams{1.0f, 1.0f, 5};
    p.min_p = 0.5f;
    Sampler s(p);
    for (int i = 0; i < 200; ++i) CHECK(s.sample(logits) < 2);
}
