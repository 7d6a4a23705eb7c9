// llama.cpp's EAGLE-3 GGUF files (tests/data/eagle3/gguf, written by
// scripts/make_eagle3_gguf_fixture.py following llama.cpp's converter): a converted checkpoint
// loads to exactly the layer its SafeAILab folder gives; a layer listed three times is read once,
// with fc's blocks added up; and broken files are refused with one line naming the file. (That
// they draft SafeAILab's chains, and greedy ≡ plain, is in test_eagle3.cpp.)
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <functional>
#include <filesystem>

#include "cli_runner.h"
#include "eagle_load_error.h"
#include "file_text.h"
#include "llm/eagle3_gguf.h"
#include "llm/eagle_layer_io.h"
#include "llm/matrix_views.h"
#include "model/dequantize.h"
#include "model/file_bytes.h"
#include "model/gguf_loader.h"
#include "test_paths.h"

using namespace medusa;
using namespace medusa::test;
namespace fs = std::filesystem;

namespace {

const std::string kFixtures = std::string(MEDUSA_SOURCE_DIR) + "/tests/data/eagle3/";

// A copy of layers-0-2-4.gguf, changed by `edit`, written to a temporary file.
struct BrokenCopy {
    fs::path path;
    BrokenCopy(const std::string& tag, const std::function<void(std::string&)>& edit,
               const std::string& source = "layers-0-2-4")
        : path(fs::temp_directory_path() / ("medusa_eagle3_gguf_" + tag + "_" + std::to_string(getpid()) + ".gguf")) {
        std::string bytes = read_text(kFixtures + "gguf/" + source + ".gguf");
        edit(bytes);
        write_text(path, bytes);
    }
    ~BrokenCopy() { fs::remove(path); }
};

// Where the value of metadata `key` begins: after its name, its type (and an array's item type
// and count).
size_t value_at(const std::string& bytes, const std::string& key, bool array) {
    const size_t at = bytes.find(key);
    REQUIRE(at != std::string::npos);
    return at + key.size() + 4 + (array ? 12 : 0);
}

void put_u32(std::string& bytes, size_t at, uint32_t v) { std::memcpy(&bytes[at], &v, 4); }

// Writes `value` over element `i` of tensor `name` (of 4- or 8-byte elements) in a GGUF's bytes.
template <class T>
void overwrite_tensor(std::string& bytes, const std::string& name, size_t i, T value) {
    const auto copy = std::make_shared<std::vector<uint8_t>>(bytes.begin(), bytes.end());
    const GgufHeader h = read_gguf_header(*copy, "copy");
    bool found = false;
    for (const GgufTensorInfo& t : h.tensors)
        if (t.name == name) {
            std::memcpy(&bytes[h.data_start + t.offset + sizeof(T) * i], &value, sizeof(T));
            found = true;
        }
    REQUIRE(found);
}

}  // namespace

TEST_CASE("a converted EAGLE-3 GGUF loads to the layer its SafeAILab folder gives", "[eagle3]") {
    const ModelFile target = load_model(model_path("stories260K.bin"));
    const EagleLayer a = load_eagle_layer(kFixtures + "layers-0-2-4", target.config);
    const EagleLayer b = load_eagle_layer(kFixtures + "gguf/layers-0-2-4.gguf", target.config);
    CHECK(b.eagle3());
    CHECK(b.target_layers == a.target_layers);
    CHECK(b.draft_to_target == a.draft_to_target);  // llama.cpp's target ids, SafeAILab's offsets
    // q and k: the converter's permutation is the loader's own order, so the rows are equal as read.
    CHECK(b.wq == a.wq);
    CHECK(b.wk == a.wk);
    CHECK(b.fc_w == a.fc_w);
    CHECK(b.wv == a.wv);
    CHECK(b.wo == a.wo);
    CHECK(b.input_norm == a.input_norm);
    CHECK(b.hidden_norm == a.hidden_norm);
    CHECK(b.post_norm == a.post_norm);
    CHECK(b.w_gate == a.w_gate);
    CHECK(b.w_up == a.w_up);
    CHECK(b.w_down == a.w_down);
    CHECK(b.final_norm == a.final_norm);
    CHECK(b.draft_head == a.draft_head);
    CHECK(b.rms_eps == a.rms_eps);
    CHECK(b.rope_theta == a.rope_theta);
}

TEST_CASE("an F16 draft keeps its matrices in F16 for the GPU, exactly, and a folded or F32 one in F32", "[eagle3]") {
    const ModelFile target = load_model(model_path("stories260K.bin"));
    const EagleLayer half = load_eagle_layer(kFixtures + "gguf/layers-0-2-4-f16.gguf", target.config);
    CHECK(half.matrix_type == DType::F16);
    CHECK(load_eagle_layer(kFixtures + "gguf/layers-0-2-4.gguf", target.config).matrix_type == DType::F32);
    CHECK(load_eagle_layer(kFixtures + "gguf/llama-cpp-rule.gguf", target.config).matrix_type == DType::F32);
    CHECK(load_eagle_layer(kFixtures + "layers-0-2-4", target.config).matrix_type == DType::F32);
    // What the GPU runner uploads: two bytes a value, the same values back.
    MatrixViews views(half.matrix_type);
    const Tensor t = views.view(half.draft_head, half.draft_vocab(), half.dim);
    CHECK(t.type == DType::F16);
    CHECK(t.nbytes == half.draft_head.size() * 2);
    CHECK(dequantize(t) == half.draft_head);
    CHECK(common_half_type({DType::F16, DType::BF16}) == DType::F32);
    CHECK(common_half_type({DType::BF16, DType::BF16}) == DType::BF16);
    CHECK(common_half_type({DType::Q8_0}) == DType::F32);
}

TEST_CASE("a layer with Llama 3's RoPE scaling is not written where the scaling would be lost", "[eagle3]") {
    const ModelFile target = load_model(model_path("stories260K.bin"));
    const EagleLayer e = load_eagle_layer(kFixtures + "gguf/layers-0-2-4-llama3-rope.gguf", target.config);
    REQUIRE(e.rope_freqs.size() == 4);
    CHECK(e.rope_freqs[3] == 32.0f);
    const fs::path dir = fs::temp_directory_path() / ("medusa_eagle3_gguf_save_" + std::to_string(getpid()));
    CHECK_THROWS_WITH(save_eagle_layer(e, dir.string(), "stories260K"), Catch::Contains("RoPE scaling"));
    CHECK_FALSE(fs::exists(dir));
}

TEST_CASE("extract_layers [2, 2, 2] reads layer 2 once, through fc's three blocks added up", "[eagle3]") {
    const ModelFile target = load_model(model_path("stories260K.bin"));
    const std::string path = kFixtures + "gguf/llama-cpp-rule.gguf";
    const EagleLayer e = load_eagle_layer(path, target.config);
    CHECK(e.target_layers == std::vector<int>{2});
    CHECK(e.fuses());
    REQUIRE(e.fc_w.size() == size_t(64 * 64));
    const auto bytes = read_file_bytes(path);
    const GgufHeader header = read_gguf_header(*bytes, path);
    const auto fc = std::find_if(header.tensors.begin(), header.tensors.end(),
                                 [](const GgufTensorInfo& t) { return t.name == "fc.weight"; });
    REQUIRE(fc != header.tensors.end());
    const std::vector<float> wide = dequantize(gguf_tensor(header, *bytes, *fc, path));  // (64, 192)
    REQUIRE(wide.size() == size_t(64 * 192));
    float worst = 0;
    for (size_t r = 0; r < 64; ++r)
        for (size_t c = 0; c < 64; ++c) {
            const float sum = wide[r * 192 + c] + wide[r * 192 + 64 + c] + wide[r * 192 + 128 + c];
            worst = std::max(worst, std::fabs(e.fc_w[r * 64 + c] - sum));
        }
    CHECK(worst < 1e-6f);
}

TEST_CASE("broken EAGLE-3 GGUF files are refused with one line naming the file and the problem", "[eagle3]") {
    auto refused = [](const BrokenCopy& f, const std::string& problem) {
        const std::string err = eagle_load_error(f.path);
        CHECK_THAT(err, Catch::Contains(f.path.string()) && Catch::Contains(problem));
        CHECK(err.find('\n') == std::string::npos);
    };
    refused(BrokenCopy("layer", [](std::string& b) { put_u32(b, value_at(b, "eagle3.extract_layers", true) + 8, 9); }),
            "eagle3.extract_layers names layer 9, but the target model has layers 0 to 4");
    refused(BrokenCopy("hidden", [](std::string& b) { put_u32(b, value_at(b, "eagle3.target_hidden_size", false), 128); }),
            "eagle3.target_hidden_size 128 is not the target model's hidden size 64");
    refused(BrokenCopy("width", [](std::string& b) { put_u32(b, value_at(b, "eagle3.embedding_length", false), 128); }),
            "the EAGLE-3 draft has hidden size 128 but the target model has 64");
    refused(BrokenCopy("residual", [](std::string& b) { b[value_at(b, "eagle3.norm_before_residual", false)] = 1; }),
            "norm_before_residual");
    refused(BrokenCopy("arch", [](std::string& b) { b.replace(value_at(b, "general.architecture", false) + 8, 6, "eagle9"); }),
            "architecture 'eagle9' is not an EAGLE-3 draft");
    refused(BrokenCopy("missing",
                       [](std::string& b) { b.replace(b.find("blk.0.attn_norm_2.weight"), 24, "blk.0.attn_norm_3.weight"); }),
            "tensor 'blk.0.attn_norm_2.weight' is missing");
    refused(BrokenCopy("d2t", [](std::string& b) { overwrite_tensor(b, "d2t", 3, int64_t(100000)); }),
            "d2t maps draft token 3 to 100000, outside the target vocabulary (0 to 511)");
    refused(BrokenCopy("cut", [](std::string& b) { b.resize(b.size() / 2); }), "lies outside the file");
    refused(BrokenCopy(
                "rope-freqs",
                [](std::string& b) { overwrite_tensor(b, "rope_freqs.weight", 2, -1.0f); },
                "layers-0-2-4-llama3-rope"),
            "a RoPE frequency factor is not a positive number");
    // A model's GGUF given as the draft.
    const std::string model_gguf = model_path("gguf/stories260K-f32.gguf");
    CHECK_THAT(eagle_load_error(model_gguf), Catch::Contains(model_gguf) && Catch::Contains("architecture 'llama' is not an EAGLE-3 draft"));
    // The command line says the same in one line and exits non-zero.
    const BrokenCopy layer("cli", [](std::string& b) { put_u32(b, value_at(b, "eagle3.extract_layers", true), 7); });
    const auto r = run_medusa("generate -m " + model_path("stories260K.bin") + " --tokenizer " + model_path("tok512.model") +
                              " --eagle " + layer.path.string() + " -n 4 -p 'Once'");
    CHECK(r.exit_code != 0);
    CHECK_THAT(r.err, Catch::Contains(layer.path.string() + ": eagle3.extract_layers names layer 7"));
}
