// llama.cpp's EAGLE-3 GGUF files (tests/data/eagle3/gguf, written by
// scripts/make_eagle3_gguf_fixture.py following llama.cpp's converter, and one its converter
// wrote itself in shared/testdata/eagle3): a converted checkpoint loads to exactly the layer its
// SafeAILab folder gives, under the current key for its target layers and the older one; a layer
// listed three times is read once, with fc's blocks added up; norm_before_fc's norm is applied
// as llama.cpp does; and broken files are refused with one line naming the file. (That they draft
// SafeAILab's chains, and greedy ≡ plain, is in test_eagle3.cpp.)
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
#include "model/load_model.h"
#include "test_paths.h"

using namespace medusa;
using namespace medusa::test;
namespace fs = std::filesystem;

namespace {

const std::string kFixtures = std::string(MEDUSA_SOURCE_DIR) + "/tests/data/eagle3/";
const std::string kConverted = testdata_path("eagle3/stories260K-eagle3-llamacpp-f16.gguf");  // llama.cpp's own

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

template <class T>
std::string le_bytes(T v) {
    std::string b(sizeof v, '\0');
    std::memcpy(b.data(), &v, sizeof v);
    return b;
}

// A GGUF metadata entry: its key, value type and value's bytes.
std::string kv_entry(const std::string& key, uint32_t type, const std::string& value) {
    return le_bytes(uint64_t(key.size())) + key + le_bytes(type) + value;
}

std::string i32_array(const std::vector<int32_t>& items) {
    std::string b = le_bytes(uint32_t(I32)) + le_bytes(uint64_t(items.size()));
    for (int32_t v : items) b += le_bytes(v);
    return b;
}

// Replaces the entry of `key`, whose value takes `value_size` bytes, with `entry`, keeping the
// header's length (general.name's text grows or shrinks by as much), so the tensor data stays put.
void replace_entry(std::string& bytes, const std::string& key, size_t value_size, const std::string& entry) {
    const size_t at = bytes.find(key);
    REQUIRE(at != std::string::npos);
    const size_t begin = at - 8, end = at + key.size() + 4 + value_size;
    const long delta = long(entry.size()) - long(end - begin);
    bytes.replace(begin, end - begin, entry);
    const size_t name_len_at = value_at(bytes, "general.name", false);
    uint64_t n;
    std::memcpy(&n, &bytes[name_len_at], 8);
    REQUIRE(long(n) > delta);
    if (delta > 0) bytes.erase(name_len_at + 8 + n - size_t(delta), size_t(delta));
    else bytes.insert(name_len_at + 8 + n, size_t(-delta), '_');
    const uint64_t shown = uint64_t(long(n) - delta);
    std::memcpy(&bytes[name_len_at], &shown, 8);
}

// eagle3.target_layers [a, b, c] as the entry `entry` instead.
void replace_target_layers(std::string& bytes, const std::string& entry) {
    replace_entry(bytes, "eagle3.target_layers", 12 + 3 * 4, entry);
}

// The tensor `name` of a GGUF, dequantized.
std::vector<float> gguf_floats(const std::string& path, const std::string& name) {
    const auto bytes = read_file_bytes(path);
    const GgufHeader header = read_gguf_header(*bytes, path);
    for (const GgufTensorInfo& t : header.tensors)
        if (t.name == name) return dequantize(gguf_tensor(header, *bytes, t, path));
    FAIL("no tensor " << name << " in " << path);
    return {};
}

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

TEST_CASE("target_layers [2, 2, 2] reads layer 2 once, through fc's three blocks added up", "[eagle3]") {
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
    refused(BrokenCopy("layer", [](std::string& b) { put_u32(b, value_at(b, "eagle3.target_layers", true) + 8, 9); }),
            "eagle3.target_layers names layer 9, but the target model has layers 0 to 4");
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
    const BrokenCopy layer("cli", [](std::string& b) { put_u32(b, value_at(b, "eagle3.target_layers", true), 7); });
    const auto r = run_medusa("generate -m " + model_path("stories260K.bin") + " --tokenizer " + model_path("tok512.model") +
                              " --eagle " + layer.path.string() + " -n 4 -p 'Once'");
    CHECK(r.exit_code != 0);
    CHECK_THAT(r.err, Catch::Contains(layer.path.string() + ": eagle3.target_layers names layer 7"));
}

TEST_CASE("the older key eagle3.extract_layers is read as target_layers is", "[eagle3]") {
    const ModelFile target = load_model(model_path("stories260K.bin"));
    const BrokenCopy old("old-key", [](std::string& b) {
        replace_target_layers(b, kv_entry("eagle3.extract_layers", ARRAY, i32_array({0, 2, 4})));
    });
    REQUIRE(read_text(old.path).find("eagle3.target_layers") == std::string::npos);
    const EagleLayer a = load_eagle_layer(old.path.string(), target.config);
    const EagleLayer b = load_eagle_layer(kFixtures + "gguf/layers-0-2-4.gguf", target.config);
    CHECK(a.target_layers == std::vector<int>{0, 2, 4});
    CHECK(a.fc_w == b.fc_w);
    CHECK(a.wq == b.wq);
    CHECK(a.draft_head == b.draft_head);
    CHECK_THAT(eagle_load_error(BrokenCopy("old-key-layer", [](std::string& b) {
                                    replace_target_layers(b, kv_entry("eagle3.extract_layers", ARRAY, i32_array({0, 2, 8})));
                                }).path),
               Catch::Contains("eagle3.extract_layers names layer 8"));
}

TEST_CASE("target layers of the wrong type are refused by the file's and the key's name", "[eagle3]") {
    auto refused = [](const BrokenCopy& f, const std::string& problem) {
        const std::string err = eagle_load_error(f.path);
        CHECK_THAT(err, Catch::Contains(f.path.string() + ": metadata key '") && Catch::Contains(problem));
        CHECK(err.find('\n') == std::string::npos);
    };
    const std::string bools = le_bytes(uint32_t(BOOL)) + le_bytes(uint64_t(3)) + std::string("\x01\x00\x01", 3);
    for (const std::string key : {"eagle3.target_layers", "eagle3.extract_layers"}) {
        CAPTURE(key);
        // Today's BOOL array [true, false, true] was read as layers 1, 0, 1.
        refused(BrokenCopy("bool", [&](std::string& b) { replace_target_layers(b, kv_entry(key, ARRAY, bools)); }),
                key + "' is an array of BOOL, not of integers");
        const std::string floats = le_bytes(uint32_t(F32)) + le_bytes(uint64_t(3)) + le_bytes(0.0f) + le_bytes(2.0f) +
                                   le_bytes(4.0f);
        refused(BrokenCopy("float", [&](std::string& b) { replace_target_layers(b, kv_entry(key, ARRAY, floats)); }),
                key + "' is an array of FLOAT32, not of integers");
        refused(BrokenCopy("scalar", [&](std::string& b) { replace_target_layers(b, kv_entry(key, U32, le_bytes(2u))); }),
                key + "' is not an array");
    }
    refused(BrokenCopy("norm-type", [](std::string& b) {
                replace_entry(b, "eagle3.norm_before_fc", 1, kv_entry("eagle3.norm_before_fc", U32, le_bytes(1u)));
            }),
            "eagle3.norm_before_fc' is not a boolean");
}

TEST_CASE("the file llama.cpp's converter wrote loads as it wrote it", "[eagle3]") {
    const ModelFile target = load_model(model_path("stories260K.bin"));
    const EagleLayer e = load_eagle_layer(kConverted, target.config);
    CHECK(e.eagle3());
    CHECK(e.target_layers == std::vector<int>{2});  // [2, 2, 2]
    CHECK(e.fuses());
    CHECK_FALSE(e.norms_feature());
    CHECK(e.draft_vocab() == 200);
    CHECK(e.rms_eps == Approx(1e-5));
    // Every tensor as the file holds it (q and k in the converter's order, which is the engine's),
    // fc's three blocks added up.
    CHECK(e.wq == gguf_floats(kConverted, "blk.0.attn_q.weight"));
    CHECK(e.wk == gguf_floats(kConverted, "blk.0.attn_k.weight"));
    CHECK(e.wv == gguf_floats(kConverted, "blk.0.attn_v.weight"));
    CHECK(e.wo == gguf_floats(kConverted, "blk.0.attn_output.weight"));
    CHECK(e.input_norm == gguf_floats(kConverted, "blk.0.attn_norm.weight"));
    CHECK(e.hidden_norm == gguf_floats(kConverted, "blk.0.attn_norm_2.weight"));
    CHECK(e.post_norm == gguf_floats(kConverted, "blk.0.ffn_norm.weight"));
    CHECK(e.w_gate == gguf_floats(kConverted, "blk.0.ffn_gate.weight"));
    CHECK(e.w_up == gguf_floats(kConverted, "blk.0.ffn_up.weight"));
    CHECK(e.w_down == gguf_floats(kConverted, "blk.0.ffn_down.weight"));
    CHECK(e.final_norm == gguf_floats(kConverted, "output_norm.weight"));
    CHECK(e.draft_head == gguf_floats(kConverted, "output.weight"));
    const std::vector<float> wide = gguf_floats(kConverted, "fc.weight");
    REQUIRE(wide.size() == size_t(64 * 192));
    REQUIRE(e.fc_w.size() == size_t(64 * 64));
    for (size_t r = 0; r < 64; ++r)
        for (size_t c = 0; c < 64; ++c) {
            const float sum = wide[r * 192 + c] + wide[r * 192 + 64 + c] + wide[r * 192 + 128 + c];
            if (std::fabs(e.fc_w[r * 64 + c] - sum) > 1e-6f) FAIL("fc at " << r << ", " << c);
        }
    // d2t: absolute target ids, as GGML's I64.
    const auto bytes = read_file_bytes(kConverted);
    const GgufHeader header = read_gguf_header(*bytes, kConverted);
    for (const GgufTensorInfo& t : header.tensors)
        if (t.name == "d2t")
            for (int i = 0; i < e.draft_vocab(); ++i) {
                int64_t to;
                std::memcpy(&to, bytes->data() + header.data_start + t.offset + 8 * size_t(i), 8);
                CHECK(e.draft_to_target[size_t(i)] == to);
            }
}

namespace {

// llama.cpp's encoder: fc(RMSNorm(cat(x_a, x_b, x_c)) * gains), the mean over all three inputs.
std::vector<float> llama_cpp_fused(const std::vector<float>& wide_fc, const std::vector<float>& gains,
                                   const std::vector<std::vector<float>>& inputs, float eps) {
    std::vector<float> x;
    for (const auto& in : inputs) x.insert(x.end(), in.begin(), in.end());
    double ss = 0;
    for (float v : x) ss += double(v) * v;
    const double r = 1.0 / std::sqrt(ss / double(x.size()) + eps);
    std::vector<float> out(wide_fc.size() / x.size(), 0.0f);
    for (size_t o = 0; o < out.size(); ++o) {
        double acc = 0;
        for (size_t c = 0; c < x.size(); ++c) acc += double(wide_fc[o * x.size() + c]) * gains[c] * x[c] * r;
        out[o] = float(acc);
    }
    return out;
}

}  // namespace

TEST_CASE("norm_before_fc normalises the three inputs with their gains before fc, as llama.cpp does", "[eagle3]") {
    const ModelFile target = load_model(model_path("stories260K.bin"));
    const std::string path = kFixtures + "gguf/norm-before-fc.gguf";
    const std::vector<float> wide_fc = gguf_floats(path, "fc.weight"), gains = gguf_floats(path, "enc.output_norm.weight");
    REQUIRE(gains.size() == 192);
    std::vector<std::vector<float>> x(3, std::vector<float>(64));
    for (size_t l = 0; l < 3; ++l)
        for (size_t i = 0; i < 64; ++i) x[l][i] = std::sin(float(7 * l + 3 * i + 1)) * float(l + 1);
    auto fused = [&](const EagleLayer& e, const std::vector<float>& feature) {
        CpuEagleModel m(e, target, 8);
        std::vector<float> row(64);
        m.fuse(feature, row.data());
        return row;
    };
    auto near = [](const std::vector<float>& a, const std::vector<float>& b) {
        REQUIRE(a.size() == b.size());
        float worst = 0;
        for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]));
        return worst;
    };
    {  // three distinct layers: the norm's gains as the file has them, fc kept in F16
        const EagleLayer e = load_eagle_layer(path, target.config);
        CHECK(e.target_layers == std::vector<int>{0, 2, 4});
        CHECK(e.feature_norm == gains);
        CHECK(e.matrix_type == DType::F16);
        std::vector<float> feature;
        for (const auto& in : x) feature.insert(feature.end(), in.begin(), in.end());
        CHECK(near(fused(e, feature), llama_cpp_fused(wide_fc, gains, x, e.rms_eps)) < 1e-5f);
    }
    {  // one layer listed three times: the gains go into fc's columns, the mean stays over 3 dim
        const BrokenCopy same("norm-222", [](std::string& b) {
            replace_target_layers(b, kv_entry("eagle3.target_layers", ARRAY, i32_array({2, 2, 2})));
        }, "norm-before-fc");
        const EagleLayer e = load_eagle_layer(same.path.string(), target.config);
        CHECK(e.target_layers == std::vector<int>{2});
        CHECK(near(fused(e, x[0]), llama_cpp_fused(wide_fc, gains, {x[0], x[0], x[0]}, e.rms_eps)) < 1e-5f);
    }
    // Listed unequally often, the mean over 3 dim is not one over the distinct layers: refused.
    const BrokenCopy uneven("norm-002", [](std::string& b) {
        replace_target_layers(b, kv_entry("eagle3.target_layers", ARRAY, i32_array({0, 0, 2})));
    }, "norm-before-fc");
    const std::string err = eagle_load_error(uneven.path);
    CHECK_THAT(err, Catch::Contains(uneven.path.string() + ": eagle3.norm_before_fc over target layers listed unequally "
                                                           "often (0, 0, 2) is not supported"));
    // Its gains are a tensor of their own, which must be there.
    const BrokenCopy no_gains("norm-missing", [](std::string& b) { b[value_at(b, "eagle3.norm_before_fc", false)] = 1; });
    CHECK_THAT(eagle_load_error(no_gains.path),
               Catch::Contains(no_gains.path.string() + ": tensor 'enc.output_norm.weight' is missing"));
    // A layer normed so is neither written in SafeAILab's layout (which has no such norm) nor trained.
    const fs::path dir = fs::temp_directory_path() / ("medusa_eagle3_gguf_norm_save_" + std::to_string(getpid()));
    CHECK_THROWS_WITH(save_eagle_layer(load_eagle_layer(path, target.config), dir.string(), "stories260K"),
                      Catch::Contains("norm before fc"));
    CHECK_FALSE(fs::exists(dir));
}
