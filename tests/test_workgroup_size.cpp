// Each shader's workgroup size as the kernels read it from the SPIR-V, against what its source
// declares (read here from shaders/*.comp), so that dispatch_over covers exactly its elements.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "gpu/command_sequence.h"
#include "gpu/embedded_shaders.h"
#include "gpu/kernel.h"
#include "gpu/vk_check.h"
#include "gpu/workgroup_size.h"
#include "gpu_fixture.h"
#include "layouts/block_params.h"
#include "llm/kernel_params.h"

using namespace medusa;

namespace {

// The .comp file an embedded module was compiled from: the longest name of a source that begins
// its own (matmul_q4_k_texel -> matmul.comp, matmul_tiled_q8_0 -> matmul_tiled.comp).
std::string source_of(const std::string& module) {
    std::string best;
    for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(MEDUSA_SOURCE_DIR) / "shaders")) {
        if (e.path().extension() != ".comp") continue;
        const std::string base = e.path().stem().string();
        if ((module == base || module.rfind(base + "_", 0) == 0) && base.size() > best.size()) best = base;
    }
    REQUIRE(!best.empty());
    std::ifstream in(std::filesystem::path(MEDUSA_SOURCE_DIR) / "shaders" / (best + ".comp"));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

uint32_t declared(const std::string& source, const std::string& key, uint32_t otherwise) {
    std::smatch m;
    if (std::regex_search(source, m, std::regex(key + R"( *= *([0-9]+))"))) return uint32_t(std::stoul(m[1]));
    return otherwise;
}

}  // namespace

TEST_CASE("every shader's workgroup size is what its source declares", "[gpu][workgroup]") {
    int by_constant = 0;
    for (size_t i = 0; i < gpu::kShaderCount; ++i) {
        const auto shader = gpu::Shader(i);
        const std::string source = source_of(gpu::shader_name(shader));
        CAPTURE(gpu::shader_name(shader));
        if (const uint32_t id = declared(source, "local_size_x_id", 1000); id != 1000) {
            // A specialization constant: the value bound to it, whatever else is bound.
            std::vector<uint32_t> spec(id + 2, 5);
            spec[id] = 96;
            CHECK(gpu::workgroup_size(shader, spec) == gpu::WorkgroupSize{96, 1, 1});
            ++by_constant;
            continue;
        }
        const gpu::WorkgroupSize want{declared(source, "local_size_x", 1), declared(source, "local_size_y", 1),
                                      declared(source, "local_size_z", 1)};
        CHECK(gpu::workgroup_size(shader) == want);
    }
    CHECK(by_constant >= 2);  // matmul.comp's and matmul_tiled.comp's variants
}

TEST_CASE("SPIR-V that ends inside an instruction or declares no workgroup size is refused", "[gpu][workgroup]") {
    const auto words = gpu::embedded_shader(gpu::Shader(0)).words;
    std::vector<uint32_t> cut(words.begin(), words.end());
    cut[5] = (cut[5] & 0xffffu) | (uint32_t(cut.size()) << 16);  // the first instruction runs past the end
    CHECK_THROWS_AS(gpu::spirv_workgroup_size(cut), gpu::VulkanError);
    const std::vector<uint32_t> header_only(words.begin(), words.begin() + 5);
    CHECK_THROWS_WITH(gpu::spirv_workgroup_size(header_only), Catch::Contains("no workgroup size"));
}

TEST_CASE("dispatch_over covers every element with the kernel's workgroups", "[gpu][workgroup]") {
    test::ValidationGuard guard;
    auto& ctx = test::gpu_context();
    // add_bias.comp adds a row's bias to each of T rows: one invocation per (element, row).
    gpu::Kernel add_bias(ctx, gpu::Shader::add_bias, 3, sizeof(kernels::RowPush));
    REQUIRE(add_bias.workgroup_size()[0] == 64);
    for (const uint32_t dim : {1u, 63u, 64u, 65u, 200u}) {
        CAPTURE(dim);
        const uint32_t T = 3;
        std::vector<float> x(size_t(dim) * T, 1.0f), bias(dim);
        for (uint32_t i = 0; i < dim; ++i) bias[i] = float(i);
        auto xb = test::buffer_with(x), bb = test::buffer_with(bias);
        std::vector<uint32_t> block(sizeof(layout::BlockParams) / 4, 0);
        block[1] = T;  // BlockParams::count
        auto params = test::buffer_with(block);
        gpu::CommandSequence seq(ctx);
        seq.begin();
        seq.dispatch_over(add_bias, {*xb, *bb, *params}, kernels::RowPush{dim}, dim, T);
        seq.end();
        seq.run();
        const auto y = test::read(*xb, x.size());
        for (uint32_t t = 0; t < T; ++t)
            for (uint32_t i = 0; i < dim; ++i) REQUIRE(y[t * dim + i] == 1.0f + float(i));
    }
}
