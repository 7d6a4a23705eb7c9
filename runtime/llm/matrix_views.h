// Matrices held as floats (a loaded or trained layer), viewed in the type their file stored them
// in for upload_matrix: f16 and bf16 weights stay 2 bytes a value on the GPU, half of what a
// drafted level reads in f32, instead of being widened because the loader dequantized them.
#pragma once
#include <list>
#include <vector>

#include "model/model_file.h"

namespace medusa {

class MatrixViews {
public:
    // `type`: F32, F16 or BF16. The floats given to view() must be values of that type (they
    // were read from it), so the narrowing copy is exact.
    explicit MatrixViews(DType type);
    // A (rows, cols) tensor over `v` (F32: a view; it must outlive the tensor) or over a narrowed
    // copy this object keeps.
    Tensor view(const std::vector<float>& v, int rows, int cols);

private:
    DType type_;
    std::list<std::vector<uint16_t>> narrowed_;  // a list: its buffers never move
};

// The type a layer's matrices are kept in: `types`' common type when it is F16 or BF16 (every
// value exact there), else F32 (quantized or mixed files: dequantized values may not fit 16 bits).
DType common_half_type(const std::vector<DType>& types);

}  // namespace medusa
