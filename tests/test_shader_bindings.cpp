// The bindings each embedded shader declares (read from its preprocessed source at build time)
// against the ones its kernel binds: a pipeline that lacks a binding its shader reads is refused
// when the kernel is built, not found by the validation layer (or a wrong read) at dispatch.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "gpu/embedded_shaders.h"
#include "gpu/kernel.h"
#include "gpu_fixture.h"
#include "llm/kernel_params.h"
#include "llm/matrix_variant.h"
#include "train/train_kernels.h"

using namespace medusa;
using namespace medusa::kernels;
using gpu::BindingKind;
using gpu::Shader;

namespace {

const std::vector<MatrixVariant> kVariants = {
#define MEDUSA_ENUMERATOR(e, suffix, epw) MatrixVariant::e,
    MEDUSA_MATRIX_VARIANTS(MEDUSA_ENUMERATOR)
#undef MEDUSA_ENUMERATOR
};

std::vector<BindingKind> storage(uint32_t n) { return std::vector<BindingKind>(n, BindingKind::Storage); }

}  // namespace

TEST_CASE("the embedded shader table is indexed by gpu::Shader and declares bindings 0..n-1", "[kernels]") {
    for (size_t i = 0; i < gpu::kShaderCount; ++i) {
        const gpu::EmbeddedShader& s = gpu::embedded_shader(Shader(i));
        CAPTURE(s.name);
        CHECK(s.shader == Shader(i));
        REQUIRE(s.words.size() > 5);
        CHECK(s.words[0] == 0x07230203u);  // the SPIR-V magic number
        CHECK(s.bindings > 0);
        CHECK(s.bindings <= 32);
        CHECK((s.bindings == 32 || (s.texel_bindings >> s.bindings) == 0));
    }
    CHECK(std::string(gpu::shader_name(Shader::matmul_q4_k_texel)) == "matmul_q4_k_texel");
}

TEST_CASE("the kernels bind what every variant of their shaders declares", "[kernels]") {
    // What the runtime composes from a weight type and the TEXEL choice (MatmulRecorder,
    // GpuModel, DecoderLayerRecorder, GpuMedusaHeads, GpuTreeRunner).
    for (MatrixVariant v : kVariants) {
        CAPTURE(variant_name(v));
        for (bool texel : {false, true})
            for (bool rope : {false, true}) {
                CAPTURE(texel, rope);
                CHECK(gpu::binding_mismatch(matmul_shader(v, texel, rope), matmul_bindings(texel, rope)) == "");
            }
        for (TileKernel k : {TileKernel::Invocations, TileKernel::MatrixUnits, TileKernel::EmulatedMatrixUnits})
            CHECK(gpu::binding_mismatch(matmul_tiled_shader(v, k), matmul_tiled_bindings()) == "");
        CHECK(gpu::binding_mismatch(embed_shader(v), storage(4)) == "");
    }
    for (bool texel : {false, true}) {
        CAPTURE(texel);
        CHECK(gpu::binding_mismatch(attention_shader(texel), attention_bindings(texel)) == "");
        CHECK(gpu::binding_mismatch(Shader::attention_split, storage(7)) == "");
        CHECK(gpu::binding_mismatch(medusa_topk_shader(texel), medusa_topk_bindings(texel)) == "");
        for (LogitRows rows : {LogitRows::Argmax, LogitRows::NodeStats})
            CHECK(gpu::binding_mismatch(logit_rows_shader(rows, texel), logit_rows_bindings(texel)) == "");
    }
}

TEST_CASE("binding_mismatch says what differs between a shader and its kernel's bindings", "[kernels]") {
    CHECK(gpu::binding_mismatch(Shader::rmsnorm, storage(5)) == "");
    CHECK(gpu::binding_mismatch(Shader::rmsnorm, storage(4)) == "rmsnorm declares 5 bindings, its kernel binds 4");
    CHECK(gpu::binding_mismatch(Shader::rmsnorm, storage(6)) == "rmsnorm declares 5 bindings, its kernel binds 6");
    // argmax_texel reads the logits as texels at binding 2.
    CHECK(gpu::binding_mismatch(Shader::argmax_texel, storage(3)) ==
          "argmax_texel declares binding 2 a uniform texel buffer, its kernel binds a storage buffer");
    CHECK(gpu::binding_mismatch(Shader::argmax, {BindingKind::Texel, BindingKind::Storage}) ==
          "argmax declares binding 0 a storage buffer, its kernel binds a uniform texel buffer");
    // The non-TEXEL matmul declares the five storage buffers only, its ROPE variant five more.
    CHECK(gpu::binding_mismatch(Shader::matmul_f32, matmul_bindings(true)) ==
          "matmul_f32 declares 5 bindings, its kernel binds 11");
    CHECK(gpu::binding_mismatch(Shader::matmul_f32, matmul_bindings(false, true)) ==
          "matmul_f32 declares 5 bindings, its kernel binds 10");
}

TEST_CASE("a kernel whose bindings are not its shader's is refused before a pipeline is built", "[kernels]") {
    test::ValidationGuard guard;
    auto& ctx = test::gpu_context();
    const uint64_t pipelines = ctx.pipelines_built();
    CHECK_THROWS_WITH(gpu::Kernel(ctx, Shader::kv_compact, 4, sizeof(KvCompactPush)),
                      "kv_compact declares 5 bindings, its kernel binds 4");
    CHECK_THROWS_WITH(gpu::Kernel(ctx, Shader::node_stats_texel, logit_rows_bindings(false), sizeof(NodeStatsPush)),
                      "node_stats_texel declares 3 bindings, its kernel binds 2");
    CHECK(ctx.pipelines_built() == pipelines);
    gpu::Kernel k(ctx, Shader::kv_compact, 5, sizeof(KvCompactPush));
    CHECK(k.name() == "kv_compact");
    CHECK(ctx.pipelines_built() == pipelines + 1);
}

TEST_CASE("every training matmul builds its kernels with the bindings their shaders declare", "[train]") {
    test::ValidationGuard guard;
    for (train::TrainMatmul m :
         {train::TrainMatmul::Auto, train::TrainMatmul::Tiled, train::TrainMatmul::Direct, train::TrainMatmul::Quad})
        CHECK_NOTHROW(train::TrainKernels(test::gpu_context(), 8, m));
}
