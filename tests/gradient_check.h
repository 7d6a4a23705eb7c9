// Gradient checks of the training references: random double vectors, and central differences
// of a loss compared with an analytic gradient.
#pragma once
#include <cmath>
#include <functional>
#include <vector>

#include "gpu_fixture.h"
#include "train/backward_reference.h"

namespace medusa::test {

inline train::ref::Vec random_vec(size_t n, uint32_t seed, double scale = 1.0) {
    const auto f = random_floats(n, seed, float(scale));
    return train::ref::Vec(f.begin(), f.end());
}

inline double dot(const train::ref::Vec& a, const train::ref::Vec& b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
}

// grad = d loss / d x by central differences at the indices in `which` (every index when empty).
inline void check_fd(train::ref::Vec& x, const train::ref::Vec& grad, const std::function<double()>& loss,
                     const char* what, const std::vector<size_t>& which = {}, double tol = 1e-6) {
    REQUIRE(grad.size() == x.size());
    std::vector<size_t> at = which;
    if (at.empty())
        for (size_t i = 0; i < x.size(); ++i) at.push_back(i);
    for (size_t i : at) {
        const double keep = x[i], eps = 1e-5;
        x[i] = keep + eps;
        const double up = loss();
        x[i] = keep - eps;
        const double down = loss();
        x[i] = keep;
        const double fd = (up - down) / (2 * eps);
        CAPTURE(what, i, fd, grad[i]);
        CHECK(std::abs(fd - grad[i]) < tol * (1 + std::abs(fd)));
    }
}

}  // namespace medusa::test
