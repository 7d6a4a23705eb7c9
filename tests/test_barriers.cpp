// A command sequence places a barrier only where one command touches what an earlier one since the
// last barrier wrote (or writes what it read), and the results are those of a barrier after every
// command.
#include <catch2/catch.hpp>

#include "gpu/command_sequence.h"
#include "gpu_fixture.h"
#include "llm/cpu_reference.h"
#include "llm/gpu_matrix.h"
#include "llm/kernel_params.h"
#include "llm/matmul_recorder.h"
#include "llm/matrix_variant.h"

using namespace medusa;
using namespace medusa::kernels;
using namespace medusa::test;

TEST_CASE("barriers go only between commands whose buffers conflict", "[gpu]") {
    ValidationGuard guard;
    auto& ctx = gpu_context();
    MatmulRecorder recorder(ctx, kernels::prefers_cpu_layouts(ctx), 1e-5f);
    const int n = 16;
    const auto w = random_floats(size_t(n) * n, 1), x = random_floats(size_t(n), 2);
    const Tensor t = f32_tensor("w", w, {n, n});
    GpuMatrix m = upload_matrix(ctx, {&t});
    auto xb = buffer_with(x), yb = buffer_with(std::vector<float>(n, 0.0f));
    auto zb = buffer_with(std::vector<float>(n, 0.0f)), copied = buffer_with(std::vector<float>(n, 0.0f));
    auto record = [&](gpu::CommandSequence& seq, const gpu::Buffer& in, const gpu::Buffer& out) {
        recorder.record(seq, {.w = &m, .x = &in, .y = &out, .out_rows = n, .tokens = 1, .x_stride = uint32_t(n),
                              .y_stride = uint32_t(n)});
    };
    gpu::CommandSequence seq(ctx);
    seq.begin();
    record(seq, *xb, *yb);  // y = W x
    record(seq, *xb, *zb);  // z = W x: reads what the first reads, writes elsewhere
    CHECK(seq.barrier_count() == 0);
    record(seq, *yb, *zb);  // z = W y: reads y, written above, and writes z again
    CHECK(seq.barrier_count() == 1);
    seq.copy(*zb, 0, *copied, 0, n * sizeof(float));  // reads z, written since the barrier
    CHECK(seq.barrier_count() == 2);
    record(seq, *yb, *xb);  // x = W y: writes x, read before the last barrier only
    CHECK(seq.barrier_count() == 2);
    record(seq, *xb, *yb);  // y = W x: reads x just written, and writes y that the dispatch above read
    CHECK(seq.barrier_count() == 3);
    seq.end();  // orders the last dispatch before whatever reads its output
    CHECK(seq.barrier_count() == 4);
    CHECK(seq.dispatch_count() == 5);
    seq.run();

    std::vector<float> y(n), z(n), x2(n), y2(n);
    matvec(y.data(), x.data(), w.data(), n, n);
    matvec(z.data(), y.data(), w.data(), n, n);
    matvec(x2.data(), y.data(), w.data(), n, n);
    matvec(y2.data(), x2.data(), w.data(), n, n);
    const auto got_z = read(*zb, n), got_copy = read(*copied, n), got_x = read(*xb, n), got_y = read(*yb, n);
    for (int i = 0; i < n; ++i) {
        CHECK(got_z[i] == Approx(z[i]).epsilon(1e-4).margin(1e-4));
        CHECK(got_copy[i] == got_z[i]);
        CHECK(got_x[i] == Approx(x2[i]).epsilon(1e-4).margin(1e-4));
        CHECK(got_y[i] == Approx(y2[i]).epsilon(1e-4).margin(1e-4));
    }
}

TEST_CASE("shaders declare which bindings they write", "[gpu]") {
    // matmul.comp reads weights, scales, inputs and gains, and writes its outputs (binding 3); its
    // ROPE variant also the cached keys and values (5 and 6).
    CHECK(gpu::embedded_shader(matmul_shader(MatrixVariant::Q4_0, false)).written_bindings == (1u << 3));
    CHECK(gpu::embedded_shader(matmul_shader(MatrixVariant::Q4_0, false, true)).written_bindings ==
          ((1u << 3) | (1u << 5) | (1u << 6)));
    // argmax.comp writes its tokens (binding 1, declared writeonly).
    CHECK((gpu::embedded_shader(logit_rows_shader(LogitRows::Argmax, false)).written_bindings & 3u) == 2u);
}
