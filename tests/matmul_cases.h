// The matrix-kernel tests' cases: weights of random values in every type the shaders decode, and
// what the CPU computes from them for a matmul call with its fusions.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gpu_fixture.h"
#include "llm/block_repack.h"
#include "llm/cpu_reference.h"
#include "llm/kernel_params.h"
#include "llm/matrix_variant.h"
#include "model/block_format.h"
#include "model/dequantize.h"
#include "model/model_file.h"
#include "model/half_float.h"

namespace medusa::test {

// A weight tensor of random values stored in `type`, with its bytes kept in `storage`.
inline Tensor random_tensor(DType type, int rows, int cols, uint32_t seed, std::vector<uint8_t>& storage, int group = 4) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(0, 255);
    const int64_t n = int64_t(rows) * cols;
    Tensor t;
    t.name = "random";
    t.type = type;
    t.shape = {rows, cols};
    auto f = random_floats(size_t(n), seed, 0.5f);
    switch (type) {
        case DType::F32:
            storage.resize(n * 4);
            std::memcpy(storage.data(), f.data(), n * 4);
            break;
        case DType::F16:
            storage.resize(n * 2);
            for (int64_t i = 0; i < n; ++i) {
                uint16_t h = float_to_half(f[i]);
                std::memcpy(&storage[i * 2], &h, 2);
            }
            break;
        case DType::Q8_G: {
            t.group_size = group;
            storage.resize(size_t(n) + size_t(n / group) * 4);
            for (int64_t i = 0; i < n; ++i) storage[i] = uint8_t(byte(rng));
            for (int64_t g = 0; g < n / group; ++g) {
                float s = 0.004f * float(1 + g % 5);
                std::memcpy(&storage[n + g * 4], &s, 4);
            }
            break;
        }
        default: {  // a GGUF block type: random bits, with sane f16 scales
            const BlockFormat* f = gguf_format(type);
            REQUIRE(f);
            t.group_size = f->values;
            storage.resize(size_t(n / f->values) * f->bytes);
            for (auto& b : storage) b = uint8_t(byte(rng));
            for (int64_t b = 0; b < n / f->values; ++b)
                for (int off : f->half_offsets) {
                    uint16_t d = float_to_half((0.01f + 0.001f * float(b % 7)) * (f->values == 256 ? 0.1f : 1.0f));
                    std::memcpy(&storage[b * f->bytes + off], &d, 2);
                }
        }
    }
    t.data = storage.data();
    t.nbytes = storage.size();
    return t;
}

// Each weight type the shaders decode, with the length a row must be a multiple of.
struct WeightTypeCase {
    DType type;
    MatrixVariant variant;
    int block;
};
inline std::vector<WeightTypeCase> weight_type_cases() {
    std::vector<WeightTypeCase> cases = {{DType::F32, MatrixVariant::F32, 1},
                                         {DType::F16, MatrixVariant::F16, 1},
                                         {DType::BF16, MatrixVariant::BF16, 1},
                                         {DType::Q8_G, MatrixVariant::Q8, 4}};
    for (const BlockFormat& f : gguf_formats())
        if (f.values > 1) cases.push_back({f.type, block_layout(f.type)->variant, f.values});
    return cases;
}

// Y (y0 before) after a matmul of `w` over T input rows of x (x_stride apart) with the kMatmul*
// fusions in `flags` (norm gains `gain`, eps 1e-5): out_rows per token, y_stride out_rows.
inline std::vector<float> reference_matmul(const Tensor& w, const std::vector<float>& x, int x_stride,
                                           const std::vector<float>& gain, std::vector<float> y0, uint32_t flags,
                                           int T, int out_rows) {
    using namespace kernels;
    const int rows = int(w.shape[0]), cols = int(w.shape[1]);
    const auto wf = dequantize(w);
    std::vector<float> xn(cols), acc(rows);
    for (int t = 0; t < T; ++t) {
        const float* xt = &x[size_t(t) * x_stride];
        if (flags & kMatmulNorm) rmsnorm(xn.data(), xt, gain.data(), cols, 1e-5f);
        else std::copy(xt, xt + cols, xn.begin());
        matvec(acc.data(), xn.data(), wf.data(), cols, rows);
        for (int o = 0; o < out_rows; ++o) {
            float v = acc[o];
            if (flags & kMatmulSwiglu) v = v / (1 + std::exp(-v)) * acc[o + out_rows];
            float& dst = y0[size_t(t) * out_rows + o];
            dst = (flags & kMatmulAccum) ? dst + v : v;
        }
    }
    return y0;
}

// What a kernel may differ from reference_matmul's `want` by: summation order, relative to
// the largest output.
inline float matmul_tolerance(const std::vector<float>& want) {
    float scale = 0;
    for (float v : want) scale = std::max(scale, std::abs(v));
    return 1e-3f * std::max(1.0f, scale);
}

}  // namespace medusa::test
