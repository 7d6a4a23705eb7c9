// A command sequence's descriptor pools: recording moves on to a new pool when one kind of
// descriptor runs out before the pool's sets do.
#include <catch2/catch.hpp>

#include "gpu/command_sequence.h"
#include "gpu_fixture.h"
#include "llm/gpu_matrix.h"
#include "llm/kernel_params.h"
#include "llm/matmul_recorder.h"
#include "llm/cpu_reference.h"
#include "layouts/block_params.h"

using namespace medusa;
using namespace medusa::kernels;
using namespace medusa::test;

TEST_CASE("a sequence of more texel matmuls than one descriptor pool holds records and runs them all", "[gpu]") {
    ValidationGuard guard;
    auto& ctx = gpu_context();
    MatmulRecorder recorder(ctx, true, 1e-5f, MatmulConfig{.texel = true, .workgroup = 64});
    const int rows = 8, cols = 16, n = 450;
    const auto w = random_floats(size_t(rows) * cols, 1), x = random_floats(size_t(cols), 2);
    const Tensor t = f32_tensor("w", w, {rows, cols});
    GpuMatrix m = upload_matrix(ctx, {&t});
    auto xb = buffer_with(x), yb = buffer_with(std::vector<float>(rows, 0.0f));
    gpu::CommandSequence seq(ctx);
    seq.begin();
    for (int i = 0; i < n; ++i)
        recorder.record(seq, {.w = &m, .x = xb.get(), .y = yb.get(), .flags = kMatmulAccum, .out_rows = rows,
                              .tokens = 1, .x_stride = uint32_t(cols), .y_stride = uint32_t(rows)});
    seq.end();
    REQUIRE(recorder.texel_dispatches() == uint64_t(n));
    // Each set holds 5 storage buffers and 6 texel views: the pool's sets run out first.
    const size_t sets_per_pool = gpu::CommandSequence::kSetsPerPool;
    static_assert(gpu::CommandSequence::kDescriptorsPerPool / 6 > gpu::CommandSequence::kSetsPerPool);
    CHECK(seq.descriptor_pool_count() == (size_t(n) + sets_per_pool - 1) / sets_per_pool);
    seq.run();
    std::vector<float> want(rows);
    matvec(want.data(), x.data(), w.data(), cols, rows);
    const auto got = read(*yb, rows);
    for (int r = 0; r < rows; ++r) CHECK(got[r] == Approx(n * want[r]).epsilon(1e-4).margin(1e-3));
}

TEST_CASE("a sequence runs out of one kind of descriptor before the pool's sets, and moves on", "[gpu]") {
    ValidationGuard guard;
    auto& ctx = gpu_context();
    // The qkv matmul with a fused RoPE through texel views: 10 storage buffers a set (5 of them
    // kMatmulRope's) and 6 texel views, so the storage buffers run out first.
    MatmulRecorder recorder(ctx, true, 1e-5f, MatmulConfig{.texel = true, .workgroup = 64});
    const int head_dim = 4, q_dim = 8, kv_dim = 4, rows = q_dim + 2 * kv_dim, cols = 16, n = 450;
    const Tensor t = f32_tensor("w", random_floats(size_t(rows) * cols, 1), {rows, cols});
    GpuMatrix m = upload_matrix(ctx, {&t});
    auto xb = buffer_with(random_floats(size_t(cols), 2)), yb = buffer_with(std::vector<float>(rows, 0.0f));
    auto keys = buffer_with(std::vector<float>(kv_dim, 0.0f)), values = buffer_with(std::vector<float>(kv_dim, 0.0f));
    auto bias = buffer_with(std::vector<float>(rows, 0.0f)), factors = buffer_with(std::vector<float>(head_dim, 1.0f));
    gpu::Buffer params(ctx, sizeof(layout::BlockParams), gpu::MemoryKind::Host);
    auto* p = static_cast<layout::BlockParams*>(params.mapped());
    *p = layout::BlockParams{};
    p->count = 1;
    const MatmulRope rope{.keys = keys.get(), .values = values.get(), .params = &params, .bias = bias.get(),
                          .factors = factors.get(), .q_dim = uint32_t(q_dim), .kv_dim = uint32_t(kv_dim),
                          .head_dim = uint32_t(head_dim), .cache_rows = 1};
    const MatmulCall call{.w = &m, .x = xb.get(), .y = yb.get(), .flags = kMatmulRope, .out_rows = rows, .tokens = 1,
                          .x_stride = uint32_t(cols), .y_stride = uint32_t(q_dim), .rope = &rope};
    REQUIRE(recorder.fuses_rope(call));
    gpu::CommandSequence seq(ctx);
    seq.begin();
    for (int i = 0; i < n; ++i) recorder.record(seq, call);
    seq.end();
    const size_t sets_per_pool = gpu::CommandSequence::kDescriptorsPerPool / 10;
    static_assert(gpu::CommandSequence::kDescriptorsPerPool / 10 < gpu::CommandSequence::kSetsPerPool);
    CHECK(seq.descriptor_pool_count() == (size_t(n) + sets_per_pool - 1) / sets_per_pool);
    seq.run();
}
