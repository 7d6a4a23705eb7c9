// What `bench --tune-kernels` keeps for blocks of many tokens (app/cli/tile_choice.h): the fastest
// tile shape whose logits agree with the untiled kernel's, from the block size where it wins.
#include <catch2/catch.hpp>

#include <cmath>

#include "tile_choice.h"

using namespace medusa;
using namespace medusa::cli;

namespace {

TileTiming row(std::optional<MatmulTile> tile, std::vector<double> ms, float error = 0) {
    TileTiming t{tile, std::move(ms)};
    t.logit_error = error;
    return t;
}

const MatmulTile k64x32{64, 32, 4, 4}, k128x64{128, 64, 8, 8};
const MatmulTile kCoop{64, 64, 0, 0, TileKernel::MatrixUnits};

}  // namespace

TEST_CASE("the tuner keeps the fastest tile whose logits agree, from the block size where it wins",
          "[kernel-tuning][tiled]") {
    const std::vector<int> sizes = {12, 16, 32, 64};
    const TileTiming untiled = row(std::nullopt, {1.0, 1.3, 2.6, 5.2});
    MatmulConfig c;
    // 128x64 is fastest at 64 tokens and beats the untiled kernel from 16 on.
    choose_tiling({untiled, row(k64x32, {1.1, 1.2, 2.0, 3.0}), row(k128x64, {1.5, 1.25, 1.9, 2.5})}, sizes, c);
    CHECK(c.tile == k128x64);
    CHECK(c.tiled_from == 16);
    // The matrix units, faster still but with logits off by a tenth of the largest: not kept.
    choose_tiling({untiled, row(k64x32, {1.1, 1.2, 2.0, 3.0}), row(kCoop, {0.5, 0.5, 0.6, 0.7}, 0.1f)}, sizes, c);
    CHECK(c.tile == k64x32);
    CHECK(c.tiled_from == 16);
    // Within the tolerance, they are.
    choose_tiling({untiled, row(k64x32, {1.1, 1.2, 2.0, 3.0}), row(kCoop, {0.5, 0.5, 0.6, 0.7}, 0.004f)}, sizes, c);
    CHECK(c.tile == kCoop);
    CHECK(c.tiled_from == 12);
    // No shape agrees: blocks stay untiled.
    choose_tiling({untiled, row(kCoop, {0.5, 0.5, 0.6, 0.7}, INFINITY)}, sizes, c);
    CHECK(c.tiled_from == 0);
    // A shape slower at some size runs only from the size above it.
    choose_tiling({untiled, row(k64x32, {0.9, 1.4, 2.0, 3.0})}, sizes, c);
    CHECK(c.tiled_from == 32);
}

TEST_CASE("a tile's logit error is its largest difference as a fraction of the largest logit", "[kernel-tuning]") {
    CHECK(logit_error({1, 2, 3}, {1, 2, 3}) == 0);
    CHECK(logit_error({1, 2, 3.5f}, {1, 2, 4}) == Approx(0.125f));  // 0.5 of 4
    CHECK(logit_error({0.1f, 0.2f}, {0.0f, 0.3f}) == Approx(0.1f));  // small logits: of 1
    CHECK(std::isinf(logit_error({1, NAN}, {1, 2})));
    CHECK(std::isinf(logit_error({1, 2}, {1, 2, 3})));
}
