// Each transformer shader against the plain C++ computation on random inputs.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <map>
#include <memory>

#include "gpu/command_sequence.h"
#include "gpu/kernel.h"
#include "gpu_fixture.h"
#include "llm/cpu_reference.h"
#include "llm/block_repack.h"
#include "llm/gpu_matrix.h"
#include "llm/kernel_params.h"
#include "llm/matmul_recorder.h"
#include "model/block_format.h"
#include "model/dequantize.h"
#include "matmul_cases.h"

using namespace medusa;
using namespace medusa::kernels;
using medusa::test::gpu_context;
using medusa::test::max_abs_diff;
using medusa::test::random_floats;
using medusa::test::buffer_with;
using medusa::test::read;
using medusa::test::random_tensor;

TEST_CASE("matmul kernel matches the CPU for every weight type and fusion", "[kernels]") {
    test::ValidationGuard guard;
    auto& ctx = gpu_context();
    const std::vector<test::WeightTypeCase> cases = test::weight_type_cases();
    REQUIRE(cases.size() == 16);
    // Both row layouts run on any device, each through storage loads and texel views; the
    // workgroup sizes the tuner tries take turns over the cases.
    const std::vector<uint32_t> workgroups = {32, 64, 128, 256};
    const uint32_t fusions[] = {0u, kMatmulNorm, kMatmulAccum, kMatmulNorm | kMatmulSwiglu};
    std::map<std::pair<bool, bool>, std::unique_ptr<MatmulRecorder>> recorders;
    for (bool lane_per_row : {false, true})
        for (bool texel : {false, true})
            recorders[{lane_per_row, texel}] = std::make_unique<MatmulRecorder>(ctx, lane_per_row, 1e-5f);
    // Not a multiple of 4 (nor, with SwiGLU's halves, of 2): a subgroup's last group of rows is partial.
    const int rows = 42;
    size_t pipeline_index = 0;
    for (const test::WeightTypeCase& c : cases) {
        // 1 token, a partial tile, and a whole tile followed by a partial one.
        for (int T : {1, 3, 13})
        for (bool lane_per_row : {false, true})
        for (bool texel : {false, true}) {
        // One workgroup size and one set of fusions per pipeline: each compiled pipeline costs about
        // a second on a CPU driver with a cold shader cache (a fresh CI machine). Both rotate over
        // the pipelines, the sizes shifting by one every four, so each layout meets every size and
        // each type, in each layout, every fusion. Strides are push constants.
        const size_t i = pipeline_index++;
        // Rows per subgroup (the subgroup layout's) rotate too: 1, 2 and 4.
        MatmulConfig config{texel, workgroups[(i + i / 4) % workgroups.size()], lane_per_row ? 1u : 1u << (i / 2 % 3)};
        // The subgroup layout's lanes read quads of words at 1 and 13 tokens, single words at 3.
        config.quads = !lane_per_row && T != 3;
        const uint32_t flags = fusions[(i / 4 * 2 + i % 2 + i / 12) % 4];
        // Rows of two 256-value super-blocks; an input row stride that is not a multiple of 4 takes
        // the one-word-at-a-time path; a row one quad (4 words) shorter leaves the lane-per-row
        // loop's last chunk of quads partly empty (where the type's blocks allow that length).
        const int short_cols = 512 - 4 * int(elements_per_word(c.variant));
        const std::pair<int, int> shapes[] = {{512, 0}, {512, 1}, {short_cols, 0}};  // (length, pad)
        for (auto [cols, pad] : shapes) {
            if (cols % c.block != 0) continue;
            CAPTURE(dtype_name(c.type), T, lane_per_row, config.name(), cols, pad, flags);
            const int x_stride = cols + pad;
            std::vector<uint8_t> storage;
            Tensor w = random_tensor(c.type, rows, cols, 7 + T, storage);
            GpuMatrix m = upload_matrix(ctx, {&w});
            REQUIRE(m.variant() == variant_name(c.variant));
            const int out_rows = (flags & kMatmulSwiglu) ? rows / 2 : rows;
            auto x = random_floats(size_t(T) * x_stride, 11 + T);
            auto gain = random_floats(cols, 5, 1.0f);
            auto y0 = random_floats(size_t(T) * out_rows, 3);
            auto xb = buffer_with(x), gb = buffer_with(gain), yb = buffer_with(y0);

            MatmulRecorder& recorder = *recorders[{lane_per_row, texel}];
            recorder.set_config(config);
            const uint64_t texel_before = recorder.texel_dispatches();
            gpu::CommandSequence seq(ctx);
            seq.begin();
            recorder.record(seq, {.w = &m, .x = xb.get(), .y = yb.get(), .extra = gb.get(), .flags = flags,
                                  .out_rows = out_rows, .tokens = T, .x_stride = uint32_t(x_stride),
                                  .y_stride = uint32_t(out_rows)});
            seq.end();
            CHECK(recorder.texel_dispatches() - texel_before == (texel ? 1u : 0u));
            seq.run();
            auto got = read(*yb, y0.size());
            const auto want = test::reference_matmul(w, x, x_stride, gain, y0, flags, T, out_rows);
            CHECK(max_abs_diff(got.data(), want.data(), want.size()) <= test::matmul_tolerance(want));
        }
        }
    }
}

TEST_CASE("stacked row blocks (the Medusa heads' ResBlocks) match the CPU in both layouts", "[kernels]") {
    test::ValidationGuard guard;
    auto& ctx = gpu_context();
    const int dim = 64, K = 3;  // K matrices of dim rows stacked; block b reads and writes row b
    for (DType type : {DType::F32, DType::Q8_0}) {
        std::vector<uint8_t> storage;
        Tensor w = random_tensor(type, K * dim, dim, 21, storage);
        GpuMatrix m = upload_matrix(ctx, {&w});
        const auto x = random_floats(size_t(K) * dim, 22), bias = random_floats(size_t(K) * dim, 23);
        const auto wf = dequantize(w);
        std::vector<float> want(size_t(K) * dim);
        for (int b = 0; b < K; ++b)
            for (int r = 0; r < dim; ++r) {
                const int o = b * dim + r;
                float s = bias[o];
                for (int i = 0; i < dim; ++i) s += wf[size_t(o) * dim + i] * x[size_t(b) * dim + i];
                want[o] = x[o] + s / (1 + std::exp(-s));
            }
        for (bool lane_per_row : {false, true})
            for (uint32_t rows : {1u, 2u, 4u}) {
                if (lane_per_row && rows > 1) continue;
                CAPTURE(dtype_name(type), lane_per_row, rows);
                MatmulConfig config{false, 64, rows};
                config.quads = rows > 1;  // the subgroup layout's lanes read words for one row, quads for more
                MatmulRecorder recorder(ctx, lane_per_row, 1e-5f, config);
                auto xb = buffer_with(x), gb = buffer_with(bias), yb = buffer_with(std::vector<float>(want.size(), 0.0f));
                gpu::CommandSequence seq(ctx);
                seq.begin();
                recorder.record(seq, {.w = &m, .x = xb.get(), .y = yb.get(), .extra = gb.get(), .flags = kMatmulResblock,
                                      .out_rows = K * dim, .tokens = 1, .x_stride = uint32_t(dim),
                                      .y_stride = uint32_t(dim), .block_rows = dim});
                seq.end();
                seq.run();
                const auto got = read(*yb, want.size());
                CHECK(max_abs_diff(got.data(), want.data(), want.size()) < 1e-3f);
            }
    }
}

TEST_CASE("matrices stack into one segment per run of equal types", "[kernels]") {
    test::ValidationGuard guard;
    std::vector<uint8_t> s1, s2, s3;
    Tensor a = random_tensor(DType::Q4_K, 8, 256, 1, s1), b = random_tensor(DType::Q4_K, 4, 256, 2, s2);
    Tensor c = random_tensor(DType::Q6_K, 4, 256, 3, s3);
    GpuMatrix same = upload_matrix(gpu_context(), {&a, &b});
    CHECK(same.variant() == "q4_k");
    CHECK(same.rows == 12);
    GpuMatrix mixed = upload_matrix(gpu_context(), {&a, &b, &c});
    CHECK(mixed.variant() == "q4_k+q6_k");
    REQUIRE(mixed.segments.size() == 2);
    CHECK(mixed.segments[1].first_row == 12);
    CHECK(mixed.segments[1].rows == 4);
    CHECK_THROWS(mixed.only());
    // A row streams what the file stores: 144 bytes per 256 Q4_K values; Q6_K's 210 take 212
    // (meta in whole words), and rows are padded to 16 bytes.
    CHECK(same.bytes() == 12 * 144);
    CHECK(block_row_words(*block_layout(DType::Q6_K), 2048) * 4 == 8 * 212);
    CHECK(mixed.segments[1].words->size() == 4 * 224);
}

TEST_CASE("argmax kernel finds the first largest logit", "[kernels]") {
    test::ValidationGuard guard;
    auto& ctx = gpu_context();
    // Storage reads (any vocabulary) and texel reads (a multiple of 4), over more tokens than one
    // workgroup's subgroups hold; ties within a lane's texel and across lanes; a subgroup a row
    // (width 0) or a workgroup of 64 or the GPUs' width a row (ties across its subgroups too).
    const int T = 11;
    const uint32_t gpu_width = logit_row_width(ctx, false);
    REQUIRE(gpu_width >= ctx.info().subgroup_size);
    for (const auto& [vocab, texel] : {std::pair{1001, false}, {1000, false}, {1000, true}})
    for (uint32_t width : {0u, 64u, gpu_width}) {
        CAPTURE(vocab, texel, width);
        auto logits = random_floats(size_t(vocab) * T, 9);
        logits[2 * vocab + 17] = 5.0f;  // a tie: the lower index must win
        logits[2 * vocab + 900] = 5.0f;
        logits[3 * vocab + 402] = 5.0f;  // a tie inside one texel
        logits[3 * vocab + 403] = 5.0f;
        std::fill_n(&logits[5 * size_t(vocab)], vocab, std::nanf(""));  // no argmax: the CPU's -1
        auto lb = buffer_with(logits);
        gpu::Buffer out(ctx, T * 4, gpu::MemoryKind::Host);
        gpu::Kernel k(ctx, logit_rows_shader(LogitRows::Argmax, texel), logit_rows_bindings(texel), sizeof(ArgmaxPush),
                      width > 0 ? std::vector<uint32_t>{width, 1u} : std::vector<uint32_t>{});
        gpu::CommandSequence seq(ctx);
        seq.begin();
        record_logit_rows(seq, k, *lb, out, ArgmaxPush{uint32_t(vocab), uint32_t(T)}, T, width > 0);
        seq.end();
        seq.run();
        std::vector<uint32_t> got(T);
        out.download(got.data(), T * 4);
        for (int t = 0; t < T; ++t) {
            std::span<const float> row(&logits[size_t(t) * vocab], vocab);
            if (t != 5) CHECK(int(got[t]) == int(std::max_element(row.begin(), row.end()) - row.begin()));
        }
        CHECK(got[2] == 17);
        CHECK(got[3] == 402);
        CHECK(int(got[5]) == -1);
    }
}
