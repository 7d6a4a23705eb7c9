#include "tile_choice.h"

#include <cmath>

namespace medusa::cli {

float logit_error(const std::vector<float>& got, const std::vector<float>& want) {
    if (got.size() != want.size()) return INFINITY;
    float scale = 1, worst = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        const float d = std::abs(got[i] - want[i]);
        if (!std::isfinite(d)) return INFINITY;
        scale = std::max(scale, std::abs(want[i]));
        worst = std::max(worst, d);
    }
    return worst / scale;
}

void choose_tiling(const std::vector<TileTiming>& rows, const std::vector<int>& sizes, MatmulConfig& config) {
    config.tiled_from = 0;
    if (rows.empty() || sizes.empty()) return;
    const size_t last = sizes.size() - 1;
    auto best = rows.end();
    for (auto it = rows.begin() + 1; it != rows.end(); ++it)
        if (it->logit_error <= kTileLogitTolerance && (best == rows.end() || it->block_ms[last] < best->block_ms[last]))
            best = it;
    if (best == rows.end()) return;
    config.tile = *best->tile;
    for (size_t i = sizes.size(); i-- > 0 && best->block_ms[i] < rows.front().block_ms[i];)
        config.tiled_from = uint32_t(sizes[i]);
}

}  // namespace medusa::cli
