// Which kernel multiplies a tile of a matrix product (llm/matmul_tiles.h).
#pragma once

namespace medusa {

// shaders/matmul_tiled.comp's invocations, each a few rows by a few tokens out of shared memory;
// shaders/matmul_coopmat.comp on the device's matrix units (VK_NV_cooperative_matrix); or its
// EMULATED variant, which writes their operations out so that any device with f16 arithmetic runs
// it (the tests, on CPU drivers; never tuned for).
enum class TileKernel { Invocations, MatrixUnits, EmulatedMatrixUnits };

}  // namespace medusa
