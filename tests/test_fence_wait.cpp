// Waiting for a submit (fence_wait.h): polled, blocking, and polled then blocking, each returns
// only once the GPU's results are there.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "gpu/command_sequence.h"
#include "gpu/fence_wait.h"
#include "gpu/kernel.h"
#include "gpu_fixture.h"
#include "llm/kernel_params.h"

using namespace medusa;
using namespace medusa::kernels;
using medusa::test::buffer_with;
using medusa::test::gpu_context;
using medusa::test::random_floats;

TEST_CASE("a wait on a submit returns after the dispatch finished, however long it polls first", "[gpu]") {
    test::ValidationGuard guard;
    auto& ctx = gpu_context();
    // Enough rows that the dispatch outlasts a 1 µs poll (the blocking path after polling) and
    // an empty submit, so an early return would leave the sentinel in the output.
    const uint32_t vocab = 32000, rows = 96;
    auto logits = random_floats(size_t(vocab) * rows, 31);
    for (uint32_t t = 0; t < rows; ++t) logits[size_t(t) * vocab + (t * 331) % vocab] = 9.0f;
    auto lb = buffer_with(logits);
    gpu::Buffer out(ctx, rows * 4, gpu::MemoryKind::Host);
    auto kernel = logit_rows_kernel(ctx, LogitRows::Argmax, vocab, *lb, sizeof(ArgmaxPush));
    gpu::CommandSequence seq(ctx);
    seq.begin();
    record_logit_rows(seq, *kernel, *lb, out, ArgmaxPush{vocab, rows}, rows);
    seq.end();
    using std::chrono::microseconds;
    for (const microseconds spin : {microseconds(0), microseconds(1), gpu::kFenceSpinBudget, microseconds(1000000)}) {
        CAPTURE(spin.count());
        const std::vector<uint32_t> sentinel(rows, 0xffffffffu);
        out.upload(sentinel.data(), rows * 4);
        seq.submit();
        seq.wait(spin);
        std::vector<uint32_t> got(rows);
        out.download(got.data(), rows * 4);
        for (uint32_t t = 0; t < rows; ++t) CHECK(got[t] == (t * 331) % vocab);
    }
}
