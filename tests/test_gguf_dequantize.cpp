// Every tensor of llama.cpp's oracle GGUF files, loaded by the engine and dequantized on the CPU,
// against the values llama.cpp's own dequantizer wrote (shared/testdata/ggml/*/…tensors.json):
// rows 0 and 1 bit for bit, sums, sums of squares and the SHA-256 of the whole f32 tensor.
#include <openssl/evp.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <map>

#include "gpu/command_sequence.h"
#include "gpu/kernel.h"
#include "gpu_fixture.h"
#include "llm/gpu_matrix.h"
#include "llm/kernel_params.h"
#include "model/block_format.h"
#include "model/dequantize.h"
#include "model/file_bytes.h"
#include "model/gguf_loader.h"
#include "model/load_model.h"
#include "model/model_file.h"
#include "model/rope_rows.h"
#include "oracle_json.h"

using namespace medusa;

namespace {

std::string sha256_hex(const std::vector<float>& v) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    REQUIRE(EVP_Digest(v.data(), v.size() * 4, md, &len, EVP_sha256(), nullptr) == 1);
    std::string hex;
    for (unsigned i = 0; i < len; ++i) {
        char b[3];
        std::snprintf(b, sizeof b, "%02x", md[i]);
        hex += b;
    }
    return hex;
}

uint32_t bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

}  // namespace

TEST_CASE("GGUF tensors dequantize to llama.cpp's values bit for bit", "[gguf-dequantize]") {
    const auto oracles = test::ggml_oracles(".tensors.json", {"quant", "arch"});
    REQUIRE(oracles.size() == 13);  // every quant/ file but the two held out, and the two arch/ files
    for (const std::string& oracle : oracles) {
        CAPTURE(oracle);
        const auto j = test::read_json(oracle);
        const auto bytes = read_file_bytes(test::gguf_beside(oracle));
        const ModelFile m = load_model_from_memory(bytes, test::gguf_beside(oracle));
        const uint8_t* file_start = bytes->data();
        for (const auto& jt : j["tensors"]) {
            const std::string name = jt["name"];
            CAPTURE(name);
            const std::string canon = gguf_canonical_name(name);
            REQUIRE_FALSE(canon.empty());
            const Tensor& t = m.get(canon);
            CHECK(gguf_format(t.type)->ggml_name == jt["type"].get<std::string>());
            std::vector<int64_t> shape;
            for (const auto& d : jt["shape"]) shape.insert(shape.begin(), d.get<int64_t>());
            CHECK(t.shape == shape);
            CHECK(t.nbytes == jt["n_bytes"].get<size_t>());
            std::vector<float> v = dequantize(t);
            // qwen2's q/k rows (and biases) are reordered from rotate_half pairs to adjacent ones at
            // load: put them back to compare with the file's own order.
            const std::string role = canon.substr(canon.rfind('.') + 1);
            if (m.config.qkv_bias && (role == "wq" || role == "wk" || role == "bq" || role == "bk")) {
                const int heads = role[1] == 'q' ? m.config.n_heads : m.config.n_kv_heads;
                const auto back = permute_rope_rows(reinterpret_cast<const uint8_t*>(v.data()), t.shape[0],
                                                    v.size() / size_t(t.shape[0]) * 4, heads, true);
                std::memcpy(v.data(), back.data(), back.size());
            } else {
                CHECK(size_t(t.data - file_start) == jt["data_offset_in_file"].get<size_t>());
            }
            REQUIRE(int64_t(v.size()) == jt["n_elements"].get<int64_t>());
            const int64_t row = shape.back();
            for (size_t r = 0; r < jt["rows"].size(); ++r) {
                const auto want = test::json_floats(jt["rows"][r]);
                REQUIRE(int64_t(want.size()) == row);
                int mismatches = 0;
                for (int64_t i = 0; i < row; ++i) mismatches += bits(v[r * row + i]) != bits(want[i]);
                CHECK(mismatches == 0);
            }
            double sum = 0, sum_sq = 0;
            for (float x : v) sum += x, sum_sq += double(x) * double(x);
            CHECK(std::fabs(sum - jt["sum"].get<double>()) <= 1e-9);
            CHECK(std::fabs(sum_sq - jt["sum_sq"].get<double>()) <= 1e-9 * jt["sum_sq"].get<double>());
            CHECK(sha256_hex(v) == jt["sha256_f32"].get<std::string>());
        }
    }
}

TEST_CASE("the held-out GGUF files load and dequantize to finite values", "[gguf-dequantize]") {
    // No oracle ships for these two (README: held-out acceptance checks); their forward pass is
    // checked against the CPU reference in test_gguf_forward.cpp.
    for (const char* name : {"quant/oracle-a-q3_k_m.gguf", "quant/oracle-a-iq4_xs.gguf"}) {
        CAPTURE(name);
        const ModelFile m = load_model(test::ggml_path(name));
        for (const Tensor& t : m.tensors) {
            const auto v = dequantize(t);
            CHECK(std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); }));
        }
    }
}

TEST_CASE("the GPU expands rows 0 and 1 of every matrix to llama.cpp's values", "[gguf-dequantize]") {
    // The embedding shader is the GPU's plain dequantizer: it writes the rows of the listed tokens.
    test::ValidationGuard guard;
    auto& ctx = test::gpu_context();
    std::map<MatrixVariant, std::unique_ptr<gpu::Kernel>> kernels;
    std::vector<uint32_t> params(4 + 2 * 128 + 128 * 4, 0);
    params[1] = 2;  // two rows: tokens 0 and 1
    params[5] = 1;
    gpu::Buffer params_buf(ctx, params.size() * 4, gpu::MemoryKind::Device);
    params_buf.upload(params.data(), params.size() * 4);
    for (const std::string& oracle : test::ggml_oracles(".tensors.json", {"quant"})) {
        const auto j = test::read_json(oracle);
        const ModelFile m = load_model(test::gguf_beside(oracle));
        for (const auto& jt : j["tensors"]) {
            const Tensor& t = m.get(gguf_canonical_name(jt["name"]));
            if (t.shape.size() != 2) continue;
            CAPTURE(oracle, t.name);
            const GpuMatrix g = upload_matrix(ctx, {&t});
            const GpuMatrix::Segment& s = g.only();
            CHECK((s.variant != MatrixVariant::F32 || t.type == DType::F32));  // expanded in the shader, not at upload
            auto& k = kernels[s.variant];
            if (!k) k = std::make_unique<gpu::Kernel>(ctx, embed_shader(s.variant), 4, sizeof(kernels::EmbedPush));
            const uint32_t cols = uint32_t(t.shape[1]);
            gpu::Buffer out(ctx, 2 * cols * 4, gpu::MemoryKind::Host);
            gpu::CommandSequence seq(ctx);
            seq.begin();
            seq.dispatch(*k, {*s.words, *s.scales, params_buf, out}, kernels::EmbedPush{cols, s.group_shift(), uint32_t(t.shape[0]), 1.0f},
                         kernels::div_up(cols / kernels::elements_per_word(s.variant), 64), 2);
            seq.end();
            seq.run();
            std::vector<float> got(2 * cols);
            out.download(got.data(), got.size() * 4);
            int beyond_one_ulp = 0;
            for (uint32_t r = 0; r < 2; ++r) {
                const auto want = test::json_floats(jt["rows"][r]);
                // -0 and +0 are the same weight: llama.cpp's (q - 8) * d keeps the sign of a negative scale
                // in a zero, a GPU's q * d + offset need not (NVIDIA's does not).
                for (uint32_t i = 0; i < cols; ++i)
                    beyond_one_ulp += got[r * cols + i] != want[i] &&
                                      std::abs(int64_t(bits(got[r * cols + i])) - int64_t(bits(want[i]))) > 1;
            }
            CHECK(beyond_one_ulp == 0);
        }
    }
}
