// Expands stored weights to f32, exactly as the GPU shaders read them.
#pragma once
#include <cstdint>
#include <vector>

#include "model/model_file.h"

namespace medusa {

float half_to_float(uint16_t h);
uint16_t float_to_half(float f);  // round to nearest even
float bf16_to_float(uint16_t b);
std::vector<float> dequantize(const Tensor& t);

}  // namespace medusa
