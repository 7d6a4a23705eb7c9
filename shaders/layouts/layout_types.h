// Lets one header declare a buffer layout for both C++ and GLSL: in C++ the structs live in
// medusa::layout (tests/test_layouts.cpp checks their member offsets against the SPIR-V's),
// in GLSL they are the element types of std430 buffers. Only 32-bit members, so C++ and std430
// agree by construction; the test proves it.
#ifndef MEDUSA_LAYOUT_TYPES_H
#define MEDUSA_LAYOUT_TYPES_H
#ifdef __cplusplus
#include <cstdint>
#define LAYOUT_BEGIN namespace medusa::layout {
#define LAYOUT_END }
namespace medusa::layout {
using u32 = uint32_t;
}
#else
#define LAYOUT_BEGIN
#define LAYOUT_END
#define u32 uint
#endif
// The most tokens one forward pass (a prompt chunk or a candidate tree) holds.
#define MAX_BLOCK_TOKENS 128
#define BLOCK_MASK_WORDS (MAX_BLOCK_TOKENS / 32)
#endif
