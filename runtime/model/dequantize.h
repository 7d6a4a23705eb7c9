// Expands stored weights to f32, exactly as the GPU shaders read them.
#pragma once
#include <cstdint>
#include <vector>

#include "model/tensor.h"

namespace medusa {

// Bytes a tensor of `numel` values takes in `type` (Q8_G: int8 values + f32 scale per group);
// throws std::invalid_argument when numel does not split into the type's blocks or groups.
size_t tensor_nbytes(DType type, int64_t numel, int group_size);
// Throws FormatError naming the tensor when t.nbytes is too small for its type and shape.
std::vector<float> dequantize(const Tensor& t);

}  // namespace medusa
