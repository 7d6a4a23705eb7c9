// The encodings a weight matrix is uploaded in (shaders/weights.glsl's variants): f32, f16 and
// bf16 words, llama2.c's int8 groups (q8), and the GGUF block types. Shaders are picked by the
// typed functions below, so a variant without its matmul or embedding shader does not compile;
// variant_name is for display only.
#pragma once
#include <cstdint>

#include "gpu/shader_list.h"
#include "llm/tile_kernel.h"

namespace medusa {

// X(enumerator, shader suffix, elements per 32-bit word): every variant, in the order of the
// shaders' `// variants:` line (the GGUF block variants stream 8 elements' bits per word).
#define MEDUSA_MATRIX_VARIANTS(X)                                                                 \
    X(F32, f32, 1) X(F16, f16, 2) X(BF16, bf16, 2) X(Q8, q8, 4) X(Q4_0, q4_0, 8) X(Q4_1, q4_1, 8) \
    X(Q5_0, q5_0, 8) X(Q5_1, q5_1, 8) X(Q8_0, q8_0, 8) X(Q2_K, q2_k, 8) X(Q3_K, q3_k, 8)         \
    X(Q4_K, q4_k, 8) X(Q5_K, q5_k, 8) X(Q6_K, q6_k, 8) X(IQ4_NL, iq4_nl, 8) X(IQ4_XS, iq4_xs, 8)

enum class MatrixVariant {
#define MEDUSA_ENUMERATOR(e, suffix, epw) e,
    MEDUSA_MATRIX_VARIANTS(MEDUSA_ENUMERATOR)
#undef MEDUSA_ENUMERATOR
};

// "q4_k": what `info` and `bench` print.
const char* variant_name(MatrixVariant v);
// Elements per weight word (EPW in weights.glsl).
uint32_t elements_per_word(MatrixVariant v);
// matmul.comp's variant for these weights, read through storage buffers or texel views.
// `rope`: the variant that also rotates q and k and writes the cache (kMatmulRope).
gpu::Shader matmul_shader(MatrixVariant v, bool texel, bool rope = false);
// The variant of the kernel that multiplies tiles (blocks of many tokens; storage buffers only):
// matmul_tiled.comp's, or matmul_coopmat.comp's (llm/matmul_tiles.h).
gpu::Shader matmul_tiled_shader(MatrixVariant v, TileKernel kernel);
// embed.comp's variant for these weights.
gpu::Shader embed_shader(MatrixVariant v);

}  // namespace medusa
