// The device-limit checks with lowered limits (ContextOptions::limit_caps) on a real device and
// real model files: a model that does not fit is refused before anything is uploaded, with one
// line naming it and the numbers, and a context that fits is the one the refusal suggests.
#include <catch2/catch.hpp>

#include <regex>

#include "gpu/buffer.h"
#include "gpu/context.h"
#include "gpu/device_limits.h"
#include "llm/gpu_model.h"
#include "llm/model_memory.h"
#include "model/load_model.h"
#include "model/model_file.h"
#include "test_paths.h"

using namespace medusa;
using medusa::test::model_path;

namespace {

gpu::ContextOptions capped(uint64_t heap, uint64_t range = 0) {
    gpu::ContextOptions o;
    o.limit_caps = {heap, range};
    return o;
}

std::string refusal(gpu::Context& ctx, const ModelFile& file, int context) {
    try {
        GpuModel model(ctx, file, {.context = context});
    } catch (const gpu::DeviceLimitError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("device limits: sizes read as people write them", "[device-limits]") {
    CHECK(gpu::format_bytes(100) == "100 bytes");
    CHECK(gpu::format_bytes(128u << 20) == "128 MiB");
    CHECK(gpu::format_bytes(uint64_t(2) << 30) == "2.00 GiB");
    CHECK(gpu::format_bytes(uint64_t(4187593113)) == "3.90 GiB");
    CHECK(gpu::format_bytes(12u << 19) == "6.00 MiB");
    CHECK(gpu::format_bytes(25u << 19) == "12.5 MiB");
}

TEST_CASE("device limits: the plan matches what a GpuModel allocates", "[device-limits][gpu]") {
    gpu::Context ctx;
    const ModelFile file = load_model(model_path("stories260K_q80.bin"));
    // With the device copies of the block's parameters and logits where the device uses them.
    const ModelMemory plan = plan_model_memory(file, 256, uses_device_copies(ctx, HostBufferAccess::Auto));
    const uint64_t before = ctx.live_bytes();
    {
        GpuModel model(ctx, file, {.context = 256});
        const uint64_t used = ctx.live_bytes() - before;
        CAPTURE(used, plan.total());
        CHECK(used >= plan.total());
        CHECK(used <= plan.total() + (64u << 10));  // block parameters, kernels' constants
    }
    const auto& c = file.config;
    CHECK(plan.cache == uint64_t(256) * (2 * c.n_layers * c.kv_dim() + c.dim) * 4);
    CHECK(ctx.validation_messages() == 0);
}

TEST_CASE("device limits: weights larger than the heap are refused with the numbers", "[device-limits][gpu]") {
    gpu::Context ctx(capped(512u << 10));
    const ModelFile file = load_model(model_path("stories260K.bin"));
    const uint64_t live = ctx.live_bytes();
    const std::string msg = refusal(ctx, file, 0);
    INFO(msg);
    CHECK(msg.find(file.path + ": its f32 weights need ") == 0);
    CHECK(msg.find("largest heap holds 512 KiB") != std::string::npos);
    CHECK(ctx.live_bytes() == live);  // nothing was allocated
    CHECK(ctx.validation_messages() == 0);
}

TEST_CASE("device limits: a KV cache too big for the heap names the context that fits", "[device-limits][gpu]") {
    gpu::Context ctx(capped(64u << 20));
    const ModelFile file = load_model(model_path("stories260K_q80.bin"));
    const std::string msg = refusal(ctx, file, 1 << 20);
    INFO(msg);
    CHECK(msg.find(file.path + ": the KV cache for 1048576 positions needs ") == 0);
    CHECK(msg.find("64.0 MiB") != std::string::npos);
    std::smatch m;
    REQUIRE(std::regex_search(msg, m, std::regex("use --ctx-size (\\d+) or less")));
    const int fits = std::stoi(m[1]);
    CHECK(fits > 512);
    CHECK(refusal(ctx, file, fits) == "");  // the suggestion holds
    CHECK(refusal(ctx, file, fits + 256) != "");  // the suggestion is rounded down to 256s
    CHECK(ctx.validation_messages() == 0);
}

TEST_CASE("device limits: a buffer past maxStorageBufferRange is refused, by name", "[device-limits][gpu]") {
    gpu::Context ctx(capped(0, 64u << 10));
    const ModelFile file = load_model(model_path("stories260K.bin"));  // tok_embeddings: 512 x 64 floats
    const std::string msg = refusal(ctx, file, 64);
    INFO(msg);
    CHECK(msg == file.path + ": tok_embeddings takes 128 KiB, past " + ctx.info().name +
                     "'s maxStorageBufferRange of 64.0 KiB");
    CHECK(ctx.validation_messages() == 0);
}

TEST_CASE("device limits: one buffer beyond the heap is refused before the driver is asked", "[device-limits][gpu]") {
    gpu::Context ctx(capped(1u << 20));
    CHECK_THROWS_AS(gpu::Buffer(ctx, 2u << 20, gpu::MemoryKind::Device), gpu::DeviceLimitError);
    gpu::Buffer fits(ctx, 512u << 10, gpu::MemoryKind::Device);
    CHECK_THROWS_WITH(gpu::Buffer(ctx, 768u << 10, gpu::MemoryKind::Device),
                      Catch::Contains("beside the 512 KiB in use"));
    CHECK(ctx.validation_messages() == 0);
}
