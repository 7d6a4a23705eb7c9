// One GGUF block (Q4_0 ... IQ4_XS) expanded to f32 exactly as ggml does, and the pieces of the
// block layouts that the GPU repacker shares.
#pragma once
#include <cstdint>

#include "model/tensor.h"

namespace medusa {

// IQ4_NL and IQ4_XS store 4-bit indices into this table.
inline constexpr int8_t kIq4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// Q4_K/Q5_K: the 6-bit scale and min of sub-block j (0..7) from the block's 12 packed bytes.
struct KScaleMin {
    uint8_t scale, min;
};
KScaleMin k_scale_min(int j, const uint8_t* packed);

// Writes gguf_format(type)->values floats.
void dequantize_block(DType type, const uint8_t* block, float* out);

}  // namespace medusa
