// IEEE half and bfloat16 to and from float, bit-exact as files and shaders store them.
#pragma once
#include <cstdint>

namespace medusa {

float half_to_float(uint16_t h);
uint16_t float_to_half(float f);  // round to nearest even
float bf16_to_float(uint16_t b);
float float_to_bf16_float(float f);  // f rounded to bf16 precision (nearest even), as a float
uint16_t float_to_bf16(float f);     // round to nearest even; NaN stays NaN

}  // namespace medusa
