// One Vulkan context for the whole test process (validation on when MEDUSA_VALIDATION=1,
// as CTest sets it), and a check that a test left no validation message behind.
#pragma once
#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "gpu/buffer.h"
#include "gpu/command_sequence.h"
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

// A device buffer holding `v` (floats, or any 32-bit values).
template <class T>
std::unique_ptr<gpu::Buffer> buffer_with(const std::vector<T>& v, gpu::MemoryKind kind = gpu::MemoryKind::Device) {
    static_assert(sizeof(T) == 4);
    auto b = std::make_unique<gpu::Buffer>(gpu_context(), v.size() * 4, kind);
    b->upload(v.data(), v.size() * 4);
    return b;
}

template <class T = float>
std::vector<T> read(const gpu::Buffer& b, size_t n) {
    std::vector<T> v(n);
    b.download(v.data(), n * 4);
    return v;
}

// Records whatever `record` dispatches into one command buffer and runs it.
inline void run_once(const std::function<void(gpu::CommandSequence&)>& record) {
    gpu::CommandSequence seq(gpu_context());
    seq.begin();
    record(seq);
    seq.end();
    seq.run();
}

inline float max_abs_diff(const float* a, const float* b, size_t n) {
    float m = 0;
    for (size_t i = 0; i < n; ++i) m = std::max(m, std::abs(a[i] - b[i]));
    return m;
}

}  // namespace medusa::test
