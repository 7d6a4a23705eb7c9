#include "llm/softmax.h"

#include <algorithm>

namespace medusa {

namespace {

template <class T>
T max_of(std::span<const T> x) {
    T m = -INFINITY;
    for (T v : x) m = std::max(m, v);
    return m;
}

}  // namespace

double softmax(std::span<double> x) {
    const double m = max_of<double>(x);
    double sum = 0;
    for (double& v : x) sum += v = std::exp(v - m);
    for (double& v : x) v /= sum;
    return sum;
}

double softmax(std::span<float> x, float temperature) {
    const float m = max_of<float>(x);
    double sum = 0;
    for (float& v : x) sum += v = std::exp((v - m) / temperature);
    for (float& v : x) v = float(v / sum);
    return sum;
}

float exp_shifted(std::span<float> x, std::span<const uint8_t> keep) {
    float m = -INFINITY;
    for (size_t i = 0; i < x.size(); ++i)
        if (keep[i]) m = std::max(m, x[i]);
    float sum = 0;
    for (size_t i = 0; i < x.size(); ++i) sum += x[i] = keep[i] ? std::exp(x[i] - m) : 0.0f;
    return sum;
}

ExpSum exp_sum(std::span<const double> x) {
    ExpSum e{max_of<double>(x), 0};
    for (double v : x) e.sum += std::exp(v - e.max);
    return e;
}

ExpSum exp_sum(std::span<const float> x, float scale) {
    float m = -INFINITY;
    for (float v : x) m = std::max(m, v * scale);
    ExpSum e{m, 0};
    for (float v : x) e.sum += std::exp(double(v * scale) - e.max);
    return e;
}

}  // namespace medusa
