// Which tiling `bench --tune-kernels` keeps for blocks of many tokens: the tile shape fastest on
// the largest block timed, among those whose logits agree with the untiled kernel's, and the
// block size from which it runs.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "llm/matmul_recorder.h"

namespace medusa::cli {

// One row of the tiling's timings: the untiled kernel (tile: none) or a tile shape.
struct TileTiming {
    std::optional<MatmulTile> tile;
    std::vector<double> block_ms;    // per block size, best of the runs
    std::vector<float> last_logits;  // the largest block's last token, from the first round
    float logit_error = 0;           // how far those are from the untiled kernel's (logit_error)
    std::string name() const { return tile ? tile->name() : "untiled"; }
};

// A tile is kept only if its logits agree with the untiled kernel's to this fraction of the
// largest logit: the matrix units' f16 products stay well within it, a wrong kernel does not.
inline constexpr float kTileLogitTolerance = 0.05f;

// The largest difference between `got` and `want` as a fraction of want's largest magnitude (at
// least 1); infinite where the sizes differ or a value is not finite.
float logit_error(const std::vector<float>& got, const std::vector<float>& want);

// Sets config.tile and config.tiled_from: the shape fastest on the largest of `sizes` among the
// rows whose logit_error is within kTileLogitTolerance, from the smallest block size at which it
// beats the untiled kernel (rows.front()) there and at every larger size; tiled_from 0 where it
// never does or no shape agrees.
void choose_tiling(const std::vector<TileTiming>& rows, const std::vector<int>& sizes, MatmulConfig& config);

}  // namespace medusa::cli
