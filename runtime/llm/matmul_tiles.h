// The tiled matrix-matrix kernel (shaders/matmul_tiled.comp) for blocks of many tokens: the tile
// shapes it is offered in, what each asks of a device, and its dispatch.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "llm/kernel_params.h"

namespace medusa {

// A workgroup's tile: `rows` rows of W (with a fused SwiGLU, rows / 2 of w1 and the same of w3)
// by `tokens` tokens, each invocation computing rows_per_thread of them for tokens_per_thread.
struct MatmulTile {
    uint32_t rows = 64, tokens = 32;
    uint32_t rows_per_thread = 4, tokens_per_thread = 4;
    uint32_t workgroup() const { return rows / rows_per_thread * (tokens / tokens_per_thread); }
    // Its shared memory: a chunk of weight and of input rows (BK inputs, padded by one vec4),
    // and a sum of squares per token.
    uint32_t shared_bytes() const;
    std::string name() const { return std::to_string(rows) + "x" + std::to_string(tokens); }
    bool operator==(const MatmulTile&) const = default;
};

// Inputs per chunk of the walk over a row (BK in matmul_tiled.comp).
constexpr uint32_t kMatmulTileK = 32;

// Every shape the tuner tries, by name ("64x32"); the default is among them.
std::span<const MatmulTile> matmul_tiles();
std::optional<MatmulTile> matmul_tile_named(std::string_view name);
std::string matmul_tile_names();  // "32x32, 64x32, ...", for messages

// Why the device cannot run `tile`, or "".
std::string matmul_tile_problem(const MatmulTile& tile, uint32_t max_workgroup_size, uint32_t shared_memory_bytes);

// The pipeline's specialization constants (BM, BN, the workgroup size, TM, TN, the kMatmul*
// FUSIONS) and its grid: a workgroup per tile of output rows and tokens.
inline kernels::MatmulGeometry tiled_matmul_geometry(const MatmulTile& tile, uint32_t out_rows, int n_tokens,
                                                     uint32_t fusions) {
    const uint32_t rows_per_group = fusions & kernels::kMatmulSwiglu ? tile.rows / 2 : tile.rows;
    return {{tile.rows, tile.tokens, tile.workgroup(), tile.rows_per_thread, tile.tokens_per_thread, fusions},
            kernels::div_up(out_rows, rows_per_group), kernels::div_up(uint32_t(n_tokens), tile.tokens)};
}

}  // namespace medusa
