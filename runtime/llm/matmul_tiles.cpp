#include "llm/matmul_tiles.h"

#include <vector>

#include "gpu/context.h"

namespace medusa {

namespace {

// Invocations are 128 in each (whole subgroups on every device, the fewest Vulkan guarantees):
// more rows per tile reread the inputs less, more tokens the weights; more per invocation serve
// more multiply-adds per shared load and need more registers.
constexpr MatmulTile kTiles[] = {
    {32, 32, 2, 4},
    {64, 32, 4, 4},
    {64, 64, 4, 8},
    {128, 64, 8, 8},
    {64, 64, 0, 0, TileKernel::MatrixUnits},
    {64, 64, 0, 0, TileKernel::EmulatedMatrixUnits},
};

// matmul_tile_loads.glsl: an invocation makes at most MAX_INPUT_LOADS (8) 16-byte loads of a
// chunk's inputs and keeps each one's sum of squares; after the last chunk those sums, one a
// load, go through the weights' tile (or the matrix units' sums), which must hold them.
constexpr bool input_loads_fit(const MatmulTile& t) {
    const uint32_t loads = t.tokens * (kMatmulTileK / 4);
    const uint32_t invocations = t.kernel == TileKernel::Invocations
                                     ? t.rows / t.rows_per_thread * (t.tokens / t.tokens_per_thread)
                                     : 128;
    const uint32_t scratch = t.kernel == TileKernel::Invocations ? t.rows * (kMatmulTileK / 4 + 1) * 4
                                                                 : t.rows * (t.tokens + 4);
    return loads <= 8 * invocations && loads <= scratch;
}
constexpr bool all_input_loads_fit() {
    for (const MatmulTile& t : kTiles)
        if (!input_loads_fit(t)) return false;
    return true;
}
static_assert(all_input_loads_fit(), "a tile's inputs take more loads an invocation than the shader keeps sums for");

}  // namespace

uint32_t MatmulTile::shared_bytes() const {
    if (matrix_units())  // matmul_coopmat.comp: f16 rows of BK + 8, f32 sums in rows of tokens + 4
        return (rows + tokens) * (kMatmulTileK + 8) * 2 + rows * (tokens + 4) * 4 + tokens * 4;
    return (rows + tokens) * (kMatmulTileK / 4 + 1) * 16 + tokens * 4;
}

std::string MatmulTile::name() const {
    const std::string shape = std::to_string(rows) + "x" + std::to_string(tokens);
    switch (kernel) {
        case TileKernel::Invocations: return shape;
        case TileKernel::MatrixUnits: return "coop" + shape;
        case TileKernel::EmulatedMatrixUnits: return "coop" + shape + "-emulated";
    }
    return shape;
}

std::span<const MatmulTile> matmul_tiles() { return kTiles; }

MatmulLimits matmul_limits(const gpu::Context& ctx) {
    return {ctx.info().subgroup_size, ctx.limits().max_workgroup_size, ctx.limits().shared_memory_bytes,
            ctx.info().cooperative_matrix, ctx.info().float16};
}

std::optional<MatmulTile> matmul_tile_named(std::string_view name) {
    for (const MatmulTile& t : kTiles)
        if (t.name() == name) return t;
    return std::nullopt;
}

std::string matmul_tile_names() {
    std::string names;
    for (const MatmulTile& t : kTiles) names += (names.empty() ? "" : ", ") + t.name();
    return names;
}

std::string matmul_tile_problem(const MatmulTile& tile, const MatmulLimits& limits) {
    if (tile.kernel == TileKernel::MatrixUnits && !limits.cooperative_matrix)
        return "tile " + tile.name() +
               " needs the device's matrix units (VK_NV_cooperative_matrix, 16x16x16 f16 on subgroups of 32), "
               "which it does not offer";
    if (tile.kernel == TileKernel::EmulatedMatrixUnits && !limits.float16)
        return "tile " + tile.name() + " needs f16 arithmetic in shaders, which the device does not offer";
    if (tile.workgroup() > limits.max_workgroup_size)
        return "tile " + tile.name() + " needs workgroups of " + std::to_string(tile.workgroup()) +
               " invocations, more than the device's largest, " + std::to_string(limits.max_workgroup_size);
    if (tile.shared_bytes() > limits.shared_memory_bytes)
        return "tile " + tile.name() + " needs " + std::to_string(tile.shared_bytes()) +
               " bytes of shared memory, more than the device's " + std::to_string(limits.shared_memory_bytes);
    return "";
}

}  // namespace medusa
