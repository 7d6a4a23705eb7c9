// The tiled matrix-matrix kernel (matmul_tiled.comp, blocks of many tokens) against the plain C++
// computation, and the whole forward pass through it against the CPU reference.
#include <catch2/catch.hpp>

#include "gpu/command_sequence.h"
#include "gpu_fixture.h"
#include "llm/cpu_reference.h"
#include "llm/gpu_matrix.h"
#include "llm/gpu_model.h"
#include "llm/kernel_params.h"
#include "llm/kernel_tuning.h"
#include "llm/matmul_recorder.h"
#include "matmul_cases.h"
#include "model/load_model.h"
#include "test_paths.h"

using namespace medusa;
using namespace medusa::kernels;
using medusa::test::buffer_with;
using medusa::test::gpu_context;
using medusa::test::max_abs_diff;
using medusa::test::random_floats;
using medusa::test::random_tensor;
using medusa::test::read;

namespace {

// A configuration that tiles blocks of 9 tokens or more (more than the untiled kernel's 8) in `tile`.
MatmulConfig tiling(const MatmulTile& tile) {
    MatmulConfig c = default_matmul_config(gpu_context(), prefers_cpu_layouts(gpu_context()));
    c.tiled_from = kMatmulTile + 1;
    c.tile = tile;
    return c;
}

// Runs `call` (its x, y and gains made here) through `recorder` and returns y; checks that it
// took the tiled kernel exactly when `tiled`.
std::vector<float> run_matmul(MatmulRecorder& recorder, MatmulCall call, const std::vector<float>& x,
                              const std::vector<float>& gain, const std::vector<float>& y0, bool tiled) {
    auto xb = buffer_with(x), gb = buffer_with(gain), yb = buffer_with(y0);
    call.x = xb.get(), call.y = yb.get(), call.extra = gb.get();
    const uint64_t before = recorder.tiled_dispatches();
    gpu::CommandSequence seq(gpu_context());
    seq.begin();
    recorder.record(seq, call);
    seq.end();
    CHECK((recorder.tiled_dispatches() > before) == tiled);
    seq.run();
    return read(*yb, y0.size());
}

// The device's tile shapes for the shared-memory kernel (the matrix units' tiles have tests of
// their own: their f16 products need a wider tolerance).
std::vector<MatmulTile> shared_memory_tiles() {
    std::vector<MatmulTile> out;
    for (const MatmulTile& t : tile_candidates(gpu_context()))
        if (!t.matrix_units()) out.push_back(t);
    return out;
}

// The matrix units multiply f16 copies of the weights and inputs: each product is off by up to
// about 2^-10 of its size, and a sum of K of them by sqrt(K) times that, where the f32 kernels
// match the CPU to 1e-3 of the largest output.
float f16_product_tolerance(float f32_tolerance) { return 5.0f * f32_tolerance; }

// The matrix units' tiles this device runs: their emulation where it has f16 arithmetic, and the
// units themselves where it offers them; a warning names what it cannot run.
std::vector<MatmulTile> matrix_unit_tiles() {
    std::vector<MatmulTile> out;
    const MatmulLimits limits = matmul_limits(gpu_context());
    for (const MatmulTile& t : matmul_tiles()) {
        if (!t.matrix_units()) continue;
        if (const std::string why = matmul_tile_problem(t, limits); why.empty())
            out.push_back(t);
        else
            WARN(gpu_context().info().name << ": " << why << ", so it is not tested here");
    }
    return out;
}

// The input length of a weight type's case: whole blocks; the word types' first run also ends
// inside a chunk of the walk over the inputs, their second has words not a multiple of 4 (read a
// word at a time).
int case_columns(const test::WeightTypeCase& c, int run) {
    const int epw = int(elements_per_word(c.variant));
    if (c.block < 32) return 64 + (run == 0 ? 4 * epw : 2 * epw + (epw == 1 ? 1 : 0));
    return std::max(c.block, 64);
}

// Rows not a multiple of any tile's (nor, with SwiGLU's halves, of half of one).
constexpr int kCaseRows = 42;

struct CaseError {
    float worst = 0;      // the largest difference from the CPU
    float tolerance = 0;  // the f32 kernels' (test::matmul_tolerance)
};

// A weight type's matrix of kCaseRows rows (seeded by `seed`) times T random tokens through
// `recorder`, which must tile it, against the plain C++ product. The second run's input rows are
// a float longer (read a float at a time).
CaseError matmul_case_error(MatmulRecorder& recorder, const test::WeightTypeCase& c, uint32_t seed, uint32_t flags,
                            int run, int T) {
    const int pad = run, cols = case_columns(c, run);
    REQUIRE(cols % c.block == 0);
    CAPTURE(dtype_name(c.type), cols, pad);
    std::vector<uint8_t> storage;
    const Tensor w = random_tensor(c.type, kCaseRows, cols, 7 + seed, storage);
    const GpuMatrix m = upload_matrix(gpu_context(), {&w});
    REQUIRE(m.variant() == variant_name(c.variant));
    const int x_stride = cols + pad, out_rows = (flags & kMatmulSwiglu) ? kCaseRows / 2 : kCaseRows;
    const auto x = random_floats(size_t(T) * x_stride, 11 + T), gain = random_floats(cols, 5, 1.0f);
    const auto y0 = random_floats(size_t(T) * out_rows, 3);
    const auto got = run_matmul(recorder,
                                {.w = &m, .flags = flags, .out_rows = out_rows, .tokens = T,
                                 .x_stride = uint32_t(x_stride), .y_stride = uint32_t(out_rows)},
                                x, gain, y0, true);
    const auto want = test::reference_matmul(w, x, x_stride, gain, y0, flags, T, out_rows);
    return {max_abs_diff(got.data(), want.data(), want.size()), test::matmul_tolerance(want)};
}

}  // namespace

TEST_CASE("the tiled matmul matches the CPU for every weight type, fusion, tile shape and partial tile",
          "[kernels][tiled]") {
    test::ValidationGuard guard;
    auto& ctx = gpu_context();
    const std::vector<MatmulTile> tiles = shared_memory_tiles();
    REQUIRE(!tiles.empty());
    const uint32_t fusions[] = {0u, kMatmulNorm, kMatmulAccum, kMatmulNorm | kMatmulSwiglu};
    // Block sizes from just above the untiled kernel's 8 to a whole block of 128; none but 64 and
    // 128 a multiple of a tile's tokens.
    const int block_sizes[] = {9, 128, 23, 40, 64, 13, 57, 33};
    MatmulRecorder recorder(ctx, prefers_cpu_layouts(ctx), 1e-5f);
    const std::vector<test::WeightTypeCase> cases = test::weight_type_cases();
    REQUIRE(cases.size() == 16);
    for (size_t i = 0; i < cases.size(); ++i) {
        const test::WeightTypeCase& c = cases[i];
        // One pipeline per type (each costs about a second to build on a CPU driver with a cold
        // shader cache): the tile shapes and fusions rotate over them so that every shape meets
        // every fusion (the four shapes of a 32 KiB device; fewer, more often, on others).
        const MatmulTile& tile = tiles[i % tiles.size()];
        const uint32_t flags = fusions[i / tiles.size() % 4];
        recorder.set_config(tiling(tile));
        for (int run = 0; run < 2; ++run) {
            const int T = block_sizes[(2 * i + run + i / 4) % std::size(block_sizes)];
            CAPTURE(tile.name(), flags, T);
            const CaseError e = matmul_case_error(recorder, c, uint32_t(i), flags, run, T);
            CHECK(e.worst <= e.tolerance);
        }
    }
}

TEST_CASE("the matrix units' tiles match the CPU for every weight type, fusion and partial tile",
          "[kernels][tiled][cooperative]") {
    test::ValidationGuard guard;
    const uint32_t fusions[] = {0u, kMatmulNorm, kMatmulAccum, kMatmulNorm | kMatmulSwiglu};
    // Partial tiles of tokens, a whole one, and two (64 and 128).
    const int block_sizes[] = {9, 64, 23, 128, 57};
    const std::vector<test::WeightTypeCase> all = test::weight_type_cases();
    for (const MatmulTile& tile : matrix_unit_tiles()) {
        MatmulRecorder recorder(gpu_context(), false, 1e-5f, tiling(tile));
        // The emulation takes a CPU driver seconds a pipeline to build: there it multiplies words
        // of 1 and 2 elements, llama2.c's groups and two block types, which the dequantizing loads
        // (shared with the tiled kernel, whose tests take every type) reach in all their ways.
        std::vector<test::WeightTypeCase> cases = all;
        if (tile.kernel == TileKernel::EmulatedMatrixUnits)
            std::erase_if(cases, [](const test::WeightTypeCase& c) {
                return c.type != DType::F32 && c.type != DType::F16 && c.type != DType::Q8_G && c.type != DType::Q4_0 &&
                       c.type != DType::Q6_K;
            });
        // The fusions rotate over the types, so that each fusion meets several.
        for (size_t i = 0; i < cases.size(); ++i)
            for (int run = 0; run < 2; ++run) {
                const uint32_t flags = fusions[i % 4];
                const int T = block_sizes[(i + run) % std::size(block_sizes)];
                CAPTURE(tile.name(), flags, T);
                const CaseError e = matmul_case_error(recorder, cases[i], uint32_t(i), flags, run, T);
                CHECK(e.worst <= f16_product_tolerance(e.tolerance));
            }
    }
}

TEST_CASE("the tiled matmul writes each segment of a stack of types, and blocks below its threshold stay untiled",
          "[kernels][tiled]") {
    test::ValidationGuard guard;
    auto& ctx = gpu_context();
    std::vector<uint8_t> s1, s2;
    // q|k|v of a Q4_K_M file: v in Q6_K, a dispatch per segment, each at its row offset.
    const Tensor a = random_tensor(DType::Q4_K, 40, 256, 1, s1), b = random_tensor(DType::Q6_K, 24, 256, 2, s2);
    const GpuMatrix m = upload_matrix(ctx, {&a, &b});
    REQUIRE(m.segments.size() == 2);
    MatmulRecorder recorder(ctx, prefers_cpu_layouts(ctx), 1e-5f, tiling(MatmulTile{}));
    const int rows = 64, cols = 256;
    for (int T : {int(kMatmulTile), 20}) {
        CAPTURE(T);
        const auto x = random_floats(size_t(T) * cols, 4), gain = random_floats(cols, 5, 1.0f);
        const auto y0 = random_floats(size_t(T) * rows, 6);
        const auto got = run_matmul(recorder,
                                    {.w = &m, .flags = kMatmulNorm | kMatmulAccum, .out_rows = rows, .tokens = T,
                                     .x_stride = uint32_t(cols), .y_stride = uint32_t(rows)},
                                    x, gain, y0, T > int(kMatmulTile));
        // Each segment's rows against its own tensor's product.
        for (const auto& [t, first] : {std::pair{&a, 0}, std::pair{&b, 40}}) {
            const int n = int(t->shape[0]);
            std::vector<float> y_part;
            for (int tok = 0; tok < T; ++tok)
                y_part.insert(y_part.end(), y0.begin() + tok * rows + first, y0.begin() + tok * rows + first + n);
            const auto want = test::reference_matmul(*t, x, cols, gain, y_part, kMatmulNorm | kMatmulAccum, T, n);
            float worst = 0;
            for (int tok = 0; tok < T; ++tok)
                for (int o = 0; o < n; ++o)
                    worst = std::max(worst, std::abs(got[size_t(tok) * rows + first + o] - want[size_t(tok) * n + o]));
            CHECK(worst <= test::matmul_tolerance(want));
        }
    }
}

namespace {

struct ForwardError {
    float worst = 0;    // the largest difference of any logit from the CPU reference's
    float largest = 0;  // the largest of the CPU's logits, in magnitude
};

// The CPU reference against the GPU model tiling with `tile`, over a 40-token prompt and then a
// tree of 12 nodes after it; checks that every layer's matmuls were tiled and that the tree's last
// node has the CPU's argmax where `same_argmax`.
ForwardError forward_error(const char* name, const MatmulTile& tile, bool same_argmax) {
    CAPTURE(name, tile.name());
    ModelFile file = load_model(test::model_path(name));
    CpuReferenceModel cpu(file);
    GpuModel gpu(gpu_context(), file, {.matmul = tiling(tile)});
    std::vector<int> prompt;
    for (int i = 0; i < 40; ++i) prompt.push_back(i == 0 ? 1 : (i * 37 + 11) % file.config.vocab_size);
    const uint64_t before = gpu.matmuls().tiled_dispatches();
    cpu.forward(TokenBlock::causal(0, prompt));
    gpu.forward(TokenBlock::causal(0, prompt));
    // Every layer's four matmuls and the classifier.
    CHECK(gpu.matmuls().tiled_dispatches() - before >= uint64_t(4 * file.config.n_layers + 1));
    ForwardError e;
    const auto compare = [&](int t) {
        const auto a = cpu.logits(t), b = gpu.logits(t);
        e.worst = std::max(e.worst, max_abs_diff(a.data(), b.data(), a.size()));
        for (float v : a) e.largest = std::max(e.largest, std::abs(v));
    };
    for (int t = 0; t < int(prompt.size()); ++t) compare(t);
    // A tree of 12 nodes after the prompt: node n hangs under node (n - 1) / 2 (a binary tree).
    TokenBlock tree;
    tree.base = int(prompt.size());
    const int n = 12;
    tree.mask.assign(n, std::vector<uint8_t>(n, 0));
    for (int t = 0; t < n; ++t) {
        tree.tokens.push_back((t * 53 + 7) % file.config.vocab_size);
        int depth = 0;
        for (int a = t; ; a = (a - 1) / 2, ++depth) {
            tree.mask[t][a] = 1;
            if (a == 0) break;
        }
        tree.positions.push_back(tree.base + depth);
    }
    cpu.forward(tree);
    gpu.forward(tree);
    for (int t = 0; t < n; ++t) compare(t);
    if (same_argmax) CHECK(gpu.argmax(n - 1) == cpu.argmax(n - 1));
    return e;
}

const char* const kForwardFiles[] = {"stories260K.bin", "gguf/llama2xs-q4_0.gguf"};

}  // namespace

TEST_CASE("a prompt and a verified tree through the tiled kernel equal the CPU reference on real model files",
          "[gpu-forward][tiled]") {
    test::ValidationGuard guard;
    const std::vector<MatmulTile> tiles = shared_memory_tiles();
    for (size_t f = 0; f < std::size(kForwardFiles); ++f)
        CHECK(forward_error(kForwardFiles[f], tiles[(f + 1) % tiles.size()], true).worst < 2e-3f);
}

TEST_CASE("a prompt and a verified tree through the matrix units stay within f16 rounding of the CPU reference",
          "[gpu-forward][tiled][cooperative]") {
    test::ValidationGuard guard;
    // f16 weights and activations in every matmul: logits within 1/200 of the largest, where the
    // f32 kernels stay within 2e-3 absolute (an argmax between near ties may differ, so it is not
    // asked).
    for (const MatmulTile& tile : matrix_unit_tiles())
        for (const char* name : kForwardFiles)  // the emulation, slow to build, on one file
            if (tile.kernel == TileKernel::MatrixUnits || name == kForwardFiles[0]) {
                const ForwardError e = forward_error(name, tile, false);
                CAPTURE(e.worst, e.largest);
                CHECK(e.worst <= 0.005f * e.largest);
            }
}
