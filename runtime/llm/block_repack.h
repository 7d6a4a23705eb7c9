// GGUF block tensors regrouped for the shaders (the row layout of shaders/weights.glsl): per row,
// every element's low bits in element order, then its high bits (in byte lanes over a 4-bit low
// plane), then each block's f16 scales and packed sub-scales. Only the grouping changes: a row takes the bytes the file gives it (Q3_K and
// Q6_K add 2 bytes of padding per 256 values, and rows are padded to 16 bytes).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "llm/matrix_variant.h"
#include "model/model_file.h"

namespace medusa {

struct BlockLayout {
    MatrixVariant variant;
    int block;            // values per block
    int low_bits, high_bits;
    int meta_halves;      // f16-sized meta entries per block
};

// The layout of a GGUF block type, or null for F32/F16/BF16 and llama2.c's Q8_G.
const BlockLayout* block_layout(DType type);
// 32-bit words of one repacked row of `cols` values.
size_t block_row_words(const BlockLayout& l, int64_t cols);
// Appends the rows of `t` (a {rows, cols} matrix of t.type) in the shaders' layout.
void repack_block_rows(const Tensor& t, std::vector<uint32_t>& out);

}  // namespace medusa
