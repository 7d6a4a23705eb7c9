// Softmax and its pieces (max-subtract, exp, normalise), the one CPU version the references, the
// trainers and the decoding strategies share. Each form keeps the precision its callers compare
// against: doubles in double, float exponentials summed in double or in float as stated.
#pragma once
#include <cmath>
#include <cstdint>
#include <span>

namespace medusa {

// In place: x_i <- exp(x_i - max x) / sum. Returns the sum of the exponentials.
double softmax(std::span<double> x);

// In place: x_i <- exp((x_i - max x) / temperature) / sum, the exponentials in float, their sum in
// double. Returns that sum: not finite when x holds a NaN or +Inf.
double softmax(std::span<float> x, float temperature = 1.0f);

// Softmax's numerators over the entries `keep` marks (nonzero): x_i <- exp(x_i - max) there, the max
// over those entries only, and 0 elsewhere. Returns their float sum, which the caller divides by
// (attention: after weighting the values).
float exp_shifted(std::span<float> x, std::span<const uint8_t> keep);

// max x and sum exp(x_i - max) in double, x left as it is: the normaliser of softmax.
struct ExpSum {
    double max = 0, sum = 0;
    double log_normalizer() const { return std::log(sum) + max; }  // log sum exp(x_i)
    double prob(double x) const { return std::exp(x - max) / sum; }  // softmax's value at x
};
ExpSum exp_sum(std::span<const double> x);
// Of float(x_i * scale) (scale: the inverse temperature), each turned into a double before it is
// shifted by the max.
ExpSum exp_sum(std::span<const float> x, float scale = 1.0f);

}  // namespace medusa
