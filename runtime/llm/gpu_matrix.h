// Weights as the shaders read them: a stream of 32-bit words plus one f32 scale per group.
// Tensors from any file format are repacked once at upload (see shaders/weights.glsl).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "gpu/buffer.h"
#include "model/model_file.h"

namespace medusa {

struct GpuMatrix {
    std::string variant;  // shader variant suffix: f32, f16, q8, q4
    int rows = 0;
    int cols = 0;
    int group = 1;  // elements per scale (quantized variants): a power of two
    uint32_t group_shift() const { uint32_t s = 0; while ((1 << s) < group) ++s; return s; }
    std::unique_ptr<gpu::Buffer> words;
    std::unique_ptr<gpu::Buffer> scales;
    size_t bytes() const { return words->size() + scales->size(); }
};

// Stacks the parts by rows (e.g. wq|wk|wv, w1|w3); they must share the column count.
// Keeps the parts' own encoding when they agree and the layout allows it, else falls back to f32.
GpuMatrix upload_matrix(gpu::Context& ctx, const std::vector<const Tensor*>& parts);

// A vector (norm gains) as plain f32.
std::unique_ptr<gpu::Buffer> upload_vector(gpu::Context& ctx, const Tensor& t);

}  // namespace medusa
