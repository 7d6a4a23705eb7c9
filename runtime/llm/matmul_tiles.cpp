#include "llm/matmul_tiles.h"

#include <vector>

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
};

}  // namespace

uint32_t MatmulTile::shared_bytes() const { return (rows + tokens) * (kMatmulTileK / 4 + 1) * 16 + tokens * 4; }

std::span<const MatmulTile> matmul_tiles() { return kTiles; }

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

std::string matmul_tile_problem(const MatmulTile& tile, uint32_t max_workgroup_size, uint32_t shared_memory_bytes) {
    if (tile.workgroup() > max_workgroup_size)
        return "tile " + tile.name() + " needs workgroups of " + std::to_string(tile.workgroup()) +
               " invocations, more than the device's largest, " + std::to_string(max_workgroup_size);
    if (tile.shared_bytes() > shared_memory_bytes)
        return "tile " + tile.name() + " needs " + std::to_string(tile.shared_bytes()) +
               " bytes of shared memory, more than the device's " + std::to_string(shared_memory_bytes);
    return "";
}

}  // namespace medusa
