// One Vulkan context for the whole test process (validation on when MEDUSA_VALIDATION=1,
// as CTest sets it), and a check that a test left no validation message behind.
#pragma once
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "gpu/context.h"

namespace medusa::test {

inline gpu::Context& gpu_context() {
    static gpu::Context ctx;
    return ctx;
}

struct ValidationGuard {
    int before = gpu_context().validation_messages();
    ~ValidationGuard() { CHECK(gpu_context().validation_messages() == before); }
};

inline std::vector<float> random_floats(size_t n, uint32_t seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-scale, scale);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}

inline float max_abs_diff(const float* a, const float* b, size_t n) {
    float m = 0;
    for (size_t i = 0; i < n; ++i) m = std::max(m, std::abs(a[i] - b[i]));
    return m;
}

}  // namespace medusa::test
