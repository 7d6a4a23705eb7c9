// The tiled matrix-matrix kernel (shaders/matmul_tiled.comp) for blocks of many tokens: the tile
// shapes it is offered in, what each asks of a device, and its dispatch.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "llm/kernel_params.h"
#include "llm/tile_kernel.h"

namespace medusa {

// A workgroup's tile: `rows` rows of W (with a fused SwiGLU, rows / 2 of w1 and the same of w3)
// by `tokens` tokens, each invocation computing rows_per_thread of them for tokens_per_thread;
// on the matrix units, 64 x 64 in 4 groups of 32 invocations, each a 32 x 32 quarter.
struct MatmulTile {
    uint32_t rows = 64, tokens = 32;
    uint32_t rows_per_thread = 4, tokens_per_thread = 4;
    TileKernel kernel = TileKernel::Invocations;
    bool matrix_units() const { return kernel != TileKernel::Invocations; }
    uint32_t workgroup() const { return matrix_units() ? 128 : rows / rows_per_thread * (tokens / tokens_per_thread); }
    // Its shared memory: a chunk of weight and of input rows (BK inputs, padded; f16 on the matrix
    // units), a sum of squares per token, and on the matrix units the tile's sums.
    uint32_t shared_bytes() const;
    // "64x32"; "coop64x64" on the matrix units, "coop64x64-emulated" emulating them.
    std::string name() const;
    bool operator==(const MatmulTile&) const = default;
};

// What of the device decides which tiles (and matmul.comp configurations) it can run.
struct MatmulLimits {
    uint32_t subgroup_size = 0;
    uint32_t max_workgroup_size = 0;
    uint32_t shared_memory_bytes = 16384;  // per workgroup (what Vulkan guarantees)
    bool cooperative_matrix = false;       // gpu::DeviceInfo's
    bool float16 = false;                  // f16 arithmetic in shaders (the emulation's)
};
MatmulLimits matmul_limits(const gpu::Context& ctx);

// Inputs per chunk of the walk over a row (BK in matmul_tiled.comp).
constexpr uint32_t kMatmulTileK = 32;

// Every shape there is, by name ("64x32"); the default is among them. The tuner tries those a
// device can run, but not the emulation.
std::span<const MatmulTile> matmul_tiles();
std::optional<MatmulTile> matmul_tile_named(std::string_view name);
std::string matmul_tile_names();  // "32x32, 64x32, ...", for messages

// Why a device of these limits cannot run `tile`, or "".
std::string matmul_tile_problem(const MatmulTile& tile, const MatmulLimits& limits);

// The pipeline's specialization constants (BM, BN, the workgroup size, TM, TN, the kMatmul*
// FUSIONS) and its grid: a workgroup per tile of output rows and tokens.
inline kernels::MatmulGeometry tiled_matmul_geometry(const MatmulTile& tile, uint32_t out_rows, int n_tokens,
                                                     uint32_t fusions) {
    const uint32_t rows_per_group = fusions & kernels::kMatmulSwiglu ? tile.rows / 2 : tile.rows;
    return {{tile.rows, tile.tokens, tile.workgroup(), tile.rows_per_thread, tile.tokens_per_thread, fusions},
            kernels::div_up(out_rows, rows_per_group), kernels::div_up(uint32_t(n_tokens), tile.tokens)};
}

}  // namespace medusa
