// Weights as the shaders read them (shaders/weights.glsl): f32/f16/bf16 words, llama2.c int8
// words with one f32 scale per group, or GGUF blocks regrouped into bit planes (block_repack.h).
// Tensors are repacked once at upload; nothing is expanded to f32 that the file did not store so.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "gpu/buffer.h"
#include "llm/matrix_variant.h"
#include "model/model_file.h"

namespace medusa {

struct GpuMatrix {
    // Rows [first_row, first_row + rows) in one encoding. A stack of tensors of different types
    // (q|k|v of a Q4_K_M file, whose v is Q6_K in some layers) has one segment per run of equal
    // types; each is its own dispatch.
    struct Segment {
        MatrixVariant variant = MatrixVariant::F32;
        int first_row = 0;
        int rows = 0;
        int group = 1;  // q8: elements per scale, a power of two
        uint32_t group_shift() const { uint32_t s = 0; while ((1 << s) < group) ++s; return s; }
        std::unique_ptr<gpu::Buffer> words;
        std::unique_ptr<gpu::Buffer> scales;  // q8 only; one float elsewhere, to keep the binding valid
    };
    int rows = 0;
    int cols = 0;
    std::vector<Segment> segments;
    size_t bytes() const;
    std::string variant() const;  // "q4_k", or "q4_k+q6_k" for a stack of several types
    const Segment& only() const;  // the single segment; throws for a mixed stack
};

// Stacks the parts by rows (e.g. wq|wk|wv, w1|w3); they must share the column count.
GpuMatrix upload_matrix(gpu::Context& ctx, const std::vector<const Tensor*>& parts);

// The device bytes of each segment upload_matrix(parts) makes, without packing anything: what a
// memory plan checks before the upload.
struct SegmentBytes {
    size_t words = 0;
    size_t scales = 0;
};
std::vector<SegmentBytes> planned_segments(const std::vector<const Tensor*>& parts);

// A vector (norm gains) as plain f32.
std::unique_ptr<gpu::Buffer> upload_vector(gpu::Context& ctx, const Tensor& t);
// Floats as a device buffer.
std::unique_ptr<gpu::Buffer> upload_floats(gpu::Context& ctx, const std::vector<float>& v);

// Layer l's q|k|v biases as one f32 vector of q_dim + 2 kv_dim (null for a model without them).
std::unique_ptr<gpu::Buffer> upload_qkv_bias(gpu::Context& ctx, const ModelFile& file, int layer);
// Layer l's q_norm and k_norm gains as one f32 vector of 2 head_dim (null without q/k norms).
std::unique_ptr<gpu::Buffer> upload_qk_norm(gpu::Context& ctx, const ModelFile& file, int layer);
// The divisors of the rotated/2 RoPE frequencies a model of `context` positions uses
// (rope_factor_tensor), or ones.
std::unique_ptr<gpu::Buffer> upload_rope_factors(gpu::Context& ctx, const ModelFile& file, int context);

}  // namespace medusa
