// Broken model files: every one must give a FormatError naming the file, never a crash.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "model/dequantize.h"
#include "model/hf_loader.h"
#include "model/load_model.h"
#include "model/model_file.h"
#include "model/safetensors_file.h"
#include "model/tokenizer.h"
#include "test_paths.h"
#include "xz_file.h"

using namespace medusa;
using medusa::test::model_path;
namespace fs = std::filesystem;

namespace {

using Bytes = std::vector<uint8_t>;

Bytes slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    REQUIRE(f.good());
    return Bytes(std::istreambuf_iterator<char>(f), {});
}

// Loads `bytes` as `name` and returns the FormatError's message; fails the test when none is thrown.
std::string load_error(const Bytes& bytes, const std::string& name) {
    try {
        load_model_from_memory(std::make_shared<Bytes>(bytes), name);
    } catch (const FormatError& e) {
        return e.what();
    }
    FAIL("no FormatError for " << name);
    return "";
}

void put_u32(Bytes& b, size_t at, uint32_t v) { std::memcpy(&b[at], &v, 4); }
void put_u64(Bytes& b, size_t at, uint64_t v) { std::memcpy(&b[at], &v, 8); }

// Offset of the first occurrence of `s` in `b`.
size_t find(const Bytes& b, const std::string& s) {
    auto it = std::search(b.begin(), b.end(), s.begin(), s.end());
    REQUIRE(it != b.end());
    return size_t(it - b.begin());
}

const char* kAllModels[] = {"stories260K.bin",         "llama2xs.bin",           "stories260K_q80.bin",
                            "gguf/stories260K-f32.gguf", "gguf/stories260K-f16.gguf", "gguf/llama2xs-f32.gguf",
                            "gguf/llama2xs-f16.gguf",    "gguf/llama2xs-q8_0.gguf",   "gguf/llama2xs-q4_0.gguf"};

}  // namespace

TEST_CASE("truncated model files are refused with the file's name", "[loader-errors]") {
    for (const char* file : kAllModels) {
        const std::string path = model_path(file);
        const Bytes full = slurp(path);
        REQUIRE_NOTHROW(load_model_from_memory(std::make_shared<Bytes>(full), path));
        for (size_t cut : {size_t(0), size_t(3), size_t(4), size_t(20), size_t(27), size_t(40), size_t(255),
                           size_t(300), size_t(5000), full.size() / 3, full.size() / 2, full.size() - 100,
                           full.size() - 1}) {
            CAPTURE(file, cut);
            const std::string msg = load_error(Bytes(full.begin(), full.begin() + long(cut)), path);
            CHECK(msg.rfind(path + ": ", 0) == 0);
        }
    }
}

TEST_CASE("a truncated file on disk names its path", "[loader-errors]") {
    const Bytes full = slurp(model_path("gguf/llama2xs-q8_0.gguf"));
    const fs::path tmp = fs::temp_directory_path() / ("medusa-cut-" + std::to_string(::getpid()) + ".gguf");
    std::ofstream(tmp, std::ios::binary).write(reinterpret_cast<const char*>(full.data()), 2000);
    try {
        load_model(tmp.string());
        FAIL("no error");
    } catch (const FormatError& e) {
        CHECK(std::string(e.what()).rfind(tmp.string() + ": ", 0) == 0);
    }
    fs::remove(tmp);
    CHECK_THROWS_WITH(load_model("/nonexistent/model.bin"), Catch::Contains("/nonexistent/model.bin"));
}

TEST_CASE("wrong magic or version is refused", "[loader-errors]") {
    Bytes g = slurp(model_path("gguf/stories260K-f32.gguf"));
    g[3] = 'X';  // "GGUX": no longer GGUF, and no sane llama2.c header either
    CHECK_THAT(load_error(g, "bad.gguf"), Catch::StartsWith("bad.gguf: "));
    g[3] = 'F';
    put_u32(g, 4, 99);
    CHECK_THAT(load_error(g, "v99.gguf"), Catch::Contains("v99.gguf: GGUF version 99"));
    Bytes q = slurp(model_path("stories260K_q80.bin"));
    put_u32(q, 4, 3);
    CHECK_THAT(load_error(q, "v3.bin"), Catch::Contains("v3.bin: llama2.c export version 3"));
    CHECK_THAT(load_error(Bytes(64, 0xff), "noise.bin"), Catch::StartsWith("noise.bin: "));
    // Text (a README, a .txt) is no model, whatever its first bytes would mean as llama2.c sizes.
    const std::string readme = "# medusa-vk\n\nA desktop program that runs language models.\n";
    CHECK(load_error(Bytes(readme.begin(), readme.end()), "README.md") ==
          "README.md: not a model file (no GGUF magic, and it begins with text where a llama2.c header would be)");
    CHECK_THAT(load_error(Bytes{'h', 'i', '\n'}, "x.txt"), Catch::Contains("x.txt: not a model file"));
}

TEST_CASE("absurd or inconsistent llama2.c configurations are refused", "[loader-errors]") {
    const Bytes base = slurp(model_path("stories260K.bin"));
    struct Case {
        int field;
        int32_t value;
        const char* says;
    };
    for (const Case& c : {Case{0, -64, "dim"}, Case{0, 0, "dim"}, Case{0, 1 << 30, "dim"}, Case{1, -1, "hidden_dim"},
                          Case{2, 1 << 30, "n_layers"}, Case{3, 7, "multiple of n_heads"},
                          Case{4, 3, "multiple of n_kv_heads"}, Case{4, 16, "n_kv_heads"},
                          Case{5, INT32_MIN, "vocabulary"}, Case{5, 1 << 30, "vocab_size"},
                          Case{6, -5, "context length"}, Case{6, 1 << 20, "truncated"}, Case{5, 513, "truncated"}}) {
        CAPTURE(c.field, c.value);
        Bytes b = base;
        put_u32(b, size_t(c.field) * 4, uint32_t(c.value));
        const std::string msg = load_error(b, "cfg.bin");
        CHECK_THAT(msg, Catch::StartsWith("cfg.bin: ") && Catch::Contains(c.says));
    }
    Bytes q = slurp(model_path("stories260K_q80.bin"));
    put_u32(q, 37, 0);  // group size
    CHECK_THAT(load_error(q, "q.bin"), Catch::Contains("group size"));
    put_u32(q, 37, 48);  // 64 * 64 values do not split into groups of 48
    CHECK_THAT(load_error(q, "q.bin"), Catch::Contains("not a multiple of the group size"));
}

TEST_CASE("broken GGUF metadata and tensor tables are refused", "[loader-errors]") {
    const Bytes base = slurp(model_path("gguf/stories260K-f32.gguf"));
    {
        Bytes b = base;
        put_u64(b, 8, uint64_t(1) << 62);  // tensor count
        CHECK_THAT(load_error(b, "x.gguf"), Catch::Contains("x.gguf: absurd counts"));
        b = base;
        put_u64(b, 16, 1'000'000);  // metadata count: more than the file can hold
        CHECK_THAT(load_error(b, "x.gguf"), Catch::Contains("absurd counts"));
    }
    {  // the vocabulary array claims a billion strings
        Bytes b = base;
        const size_t key = find(b, "tokenizer.ggml.tokens");
        put_u64(b, key + 21 + 4 + 4, 1'000'000'000);
        CHECK_THAT(load_error(b, "x.gguf"), Catch::Contains("more than the file can hold"));
    }
    {  // a string length past the end of the file
        Bytes b = base;
        put_u64(b, 24, uint64_t(1) << 40);
        CHECK_THAT(load_error(b, "x.gguf"), Catch::Contains("x.gguf: metadata key") && Catch::Contains("absurd"));
    }
    {  // a hyper-parameter that breaks the shapes
        Bytes b = base;
        const size_t hidden = find(b, "llama.feed_forward_length");
        put_u32(b, hidden + 25 + 4, 180);
        CHECK_THAT(load_error(b, "x.gguf"),
                   Catch::Contains("x.gguf: tensor 'layers.0.w1' has shape [172, 64], expected [180, 64]"));
        b = base;
        const size_t key = find(b, "llama.embedding_length");
        put_u32(b, key + 22 + 4, 96);  // heads of 12, but RoPE over 8 dimensions
        CHECK_THAT(load_error(b, "x.gguf"), Catch::Contains("x.gguf: llama.rope.dimension_count 8 differs from the head size 12"));
        put_u32(b, key + 22 + 4, 0);
        CHECK_THAT(load_error(b, "x.gguf"), Catch::Contains("dim = 0"));
    }
    {  // an unsupported value type for a key
        Bytes b = base;
        const size_t key = find(b, "general.architecture");
        put_u32(b, key + 20, 77);
        CHECK_THAT(load_error(b, "x.gguf"), Catch::Contains("unknown metadata value type 77"));
    }
    {  // tensor data out of range, and misaligned
        Bytes b = base;
        const size_t name = find(b, "blk.0.attn_q.weight");
        const size_t offset_at = name + 19 + 4 + 2 * 8 + 4;
        uint64_t offset;
        std::memcpy(&offset, &b[offset_at], 8);
        REQUIRE(offset == 262400);  // what the file's tensor table holds for this tensor
        put_u64(b, offset_at, 1'184'000);
        CHECK_THAT(load_error(b, "x.gguf"),
                   Catch::Contains("x.gguf: tensor 'blk.0.attn_q.weight' data [offset") &&
                       Catch::Contains("lies outside the file (size 1185376)"));
        put_u64(b, offset_at, 262401);
        CHECK_THAT(load_error(b, "x.gguf"), Catch::Contains("not a multiple of the alignment 32"));
        put_u64(b, offset_at, 262400);
        put_u32(b, offset_at - 4, 16);  // GGML type IQ2_XXS
        CHECK_THAT(load_error(b, "x.gguf"),
                   Catch::Contains("x.gguf: tensor 'blk.0.attn_q.weight' has GGML type IQ2_XXS (type 16), which is "
                                   "not supported (F32, F16, BF16, Q4_0") &&
                       Catch::Contains("Q6_K, IQ4_NL, IQ4_XS are)"));
        put_u32(b, offset_at - 4, 12);  // Q4_K over 64-wide rows
        CHECK_THAT(load_error(b, "x.gguf"), Catch::Contains("has rows of 64 values, not a multiple of the 256-value Q4_K block"));
        put_u32(b, offset_at - 4, 8);  // Q8_0 over 64-wide rows: fits, but the data is now read as blocks
        CHECK_NOTHROW(load_model_from_memory(std::make_shared<Bytes>(b), "x.gguf"));
        put_u64(b, offset_at - 4 - 16, 48);  // ne[0] = 48: rows no longer split into 32-blocks
        CHECK_THAT(load_error(b, "x.gguf"), Catch::Contains("not a multiple of the 32-value Q8_0 block"));
    }
    {  // FFN gate and up in different types: the fused SwiGLU cannot run them
        Bytes b = base;
        const size_t name = find(b, "blk.0.ffn_up.weight");
        put_u32(b, name + 19 + 4 + 2 * 8, 1);  // F16: half the bytes, still inside the file
        CHECK_THAT(load_error(b, "x.gguf"),
                   Catch::Contains("x.gguf: layer 0 stores its FFN gate and up matrices as f32 and f16, which is not "
                                   "supported"));
    }
    {  // a tensor missing
        Bytes b = base;
        b[find(b, "output_norm.weight")] = 'X';
        CHECK_THAT(load_error(b, "x.gguf"), Catch::Contains("x.gguf: tensor 'norm' is missing"));
    }
}

TEST_CASE("broken safetensors files are refused", "[loader-errors]") {
    const float w[4] = {1, 2, 3, 4};
    const std::vector<Tensor> tensors = {{"a", DType::F32, {2, 2}, 0, reinterpret_cast<const uint8_t*>(w), 16}};
    const Bytes good = serialize_safetensors(tensors);
    REQUIRE_NOTHROW(SafetensorsFile::from_memory(std::make_shared<Bytes>(good), "h.safetensors"));
    auto error = [](const Bytes& b) {
        try {
            SafetensorsFile::from_memory(std::make_shared<Bytes>(b), "h.safetensors");
        } catch (const FormatError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    auto with_header = [](const std::string& json, size_t data) {
        Bytes b(8 + json.size() + data, 0);
        put_u64(b, 0, json.size());
        std::memcpy(&b[8], json.data(), json.size());
        return b;
    };
    for (size_t cut = 0; cut < good.size(); cut += 7) CHECK_THAT(error(Bytes(good.begin(), good.begin() + long(cut))),
                                                                  Catch::StartsWith("h.safetensors: "));
    Bytes b = good;
    put_u64(b, 0, uint64_t(1) << 60);
    CHECK_THAT(error(b), Catch::Contains("header length"));
    CHECK_THAT(error(with_header("{\"a\": 1", 0)), Catch::Contains("not a JSON object"));
    CHECK_THAT(error(with_header("[1, 2]", 0)), Catch::Contains("not a JSON object"));
    CHECK_THAT(error(with_header(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})", 4)),
               Catch::Contains("tensor 'a' data [offset") && Catch::Contains("lies outside the file"));
    CHECK_THAT(error(with_header(R"({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", 8)),
               Catch::Contains("do not hold its 12 bytes"));
    CHECK_THAT(error(with_header(R"({"a": {"dtype": "F64", "shape": [1], "data_offsets": [0, 8]}})", 8)),
               Catch::Contains("dtype F64"));
    // Integer tensors (EAGLE-3's d2t and t2d) are index tensors, sized by their own element width.
    CHECK_THAT(error(with_header(R"({"a": {"dtype": "I64", "shape": [2], "data_offsets": [0, 8]}})", 8)),
               Catch::Contains("do not hold its 16 bytes"));
    CHECK_THAT(error(with_header(R"({"a": {"dtype": "BOOL", "shape": [8], "data_offsets": [0, 8]}})", 8)),
               Catch::Equals("no error"));
    CHECK_THAT(error(with_header(R"({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 8]}})", 8)),
               Catch::Contains("not a non-negative integer"));
    CHECK_THAT(error(with_header(R"({"a": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 8]}})", 8)),
               Catch::Contains("absurdly large"));
    CHECK_THAT(error(with_header(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                      "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})", 12)),
               Catch::Contains("overlap or hole"));
    CHECK_THAT(error(with_header(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})", 8)),
               Catch::Contains("cover 4 bytes of a 8-byte data section"));
    CHECK_THAT(error(with_header(R"({"__metadata__": {"n": 3}})", 0)), Catch::Contains("is not a string"));
}

TEST_CASE("broken Hugging Face folders are refused", "[loader-errors]") {
    const fs::path dir = fs::temp_directory_path() / ("medusa-hf-errors-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const float w[4] = {1, 2, 3, 4};
    write_safetensors((dir / "model.safetensors").string(),
                      {{"model.norm.weight", DType::F32, {4}, 0, reinterpret_cast<const uint8_t*>(w), 16}});
    CHECK_THROWS_WITH(load_model(dir.string()), Catch::Contains("config.json"));
    std::ofstream(dir / "config.json") << R"({"hidden_size": 4, "intermediate_size": 8, "num_hidden_layers": 1,
        "num_attention_heads": 2, "vocab_size": 3, "model_type": "llama"})";
    CHECK_THROWS_WITH(load_model(dir.string()), Catch::Contains(dir.string() + ": tensor 'tok_embeddings' is missing"));
    std::ofstream(dir / "config.json") << R"({"hidden_size": 4, "num_hidden_layers": 1})";
    CHECK_THROWS_WITH(load_model(dir.string()), Catch::Contains("'intermediate_size' is missing"));
    std::ofstream(dir / "config.json") << R"({"hidden_size": 4.5})";
    CHECK_THROWS_WITH(load_model(dir.string()), Catch::Contains("'hidden_size' is not an integer"));
    std::ofstream(dir / "config.json") << R"({"model_type": "mistral"})";
    CHECK_THROWS_WITH(load_model(dir.string()),
                      Catch::Contains("model_type \"mistral\" is not supported (\"llama\", \"qwen2\", \"qwen3\", "
                                      "\"gemma3_text\" and \"phi3\" are)"));
    const std::string small = R"("hidden_size": 4, "intermediate_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2,
        "vocab_size": 3)";
    std::ofstream(dir / "config.json") << "{" + small + R"(, "rope_scaling": {"rope_type": "yarn", "factor": 4}})";
    CHECK_THROWS_WITH(load_model(dir.string()),
                      Catch::Contains("config.json: rope_scaling type 'yarn' is not supported (llama3 and linear are)"));
    std::ofstream(dir / "config.json") << "{" + small + R"(, "rope_scaling": {"type": "linear", "factor": -2}})";
    CHECK_THROWS_WITH(load_model(dir.string()), Catch::Contains("rope_scaling 'factor' is not a positive number"));
    std::ofstream(dir / "config.json") << "{" + small + R"(, "model_type": "llama", "attention_bias": true})";
    CHECK_THROWS_WITH(load_model(dir.string()), Catch::Contains("attention_bias"));
    fs::remove(dir / "model.safetensors");
    std::ofstream(dir / "model.safetensors.index.json") << R"({"weight_map": {"model.norm.weight": "../../etc/passwd"}})";
    CHECK_THROWS_WITH(load_model(dir.string()), Catch::Contains("invalid shard"));
    fs::remove_all(dir);
}

TEST_CASE("a GGUF file of another architecture names it and the supported ones", "[loader-errors]") {
    // llama.cpp's vocabulary file of Falcon: a GGUF file whose architecture is falcon.
    const std::string path = model_path("../testdata/ggml/tokenizer/ggml-vocab-falcon.gguf.xz");
    CHECK_THAT(load_error(*test::read_xz(path), "falcon.gguf"),
               Catch::Contains("falcon.gguf: architecture 'falcon' is not supported (llama, qwen2, qwen3, gemma3 and phi3 "
                                              "are)"));
}

TEST_CASE("a tokenizer from another model is refused with both names", "[loader-errors]") {
    const ModelFile m = load_model(model_path("gguf/llama2xs-q4_0.gguf"));
    const Tokenizer tok = Tokenizer::from_file(model_path("llama2-tokenizer.model"));
    CHECK_THROWS_WITH(check_vocab_match(m, tok), Catch::Contains(model_path("llama2-tokenizer.model")) &&
                                                     Catch::Contains(model_path("gguf/llama2xs-q4_0.gguf")));
    // A GGUF whose embedded vocabulary disagrees with its embedding.
    Bytes b = slurp(model_path("gguf/llama2xs-f32.gguf"));
    const size_t key = find(b, "tokenizer.ggml.scores");
    put_u64(b, key + 21 + 4 + 4, 511);  // one score fewer: the rest of the file no longer parses either
    CHECK_THAT(load_error(b, "v.gguf"), Catch::StartsWith("v.gguf: "));
}

// Found by fuzz_torch_checkpoint: a tensor with a zero dimension has no bytes and may have no data
// pointer; expanding it must give nothing rather than hand memcpy a null pointer (UBSan flags that).
TEST_CASE("an empty tensor without data expands to no values", "[loader-errors]") {
    for (DType type : {DType::F32, DType::F16, DType::Q8_G}) {
        Tensor t;
        t.name = "empty";
        t.type = type;
        t.shape = {0, 4};
        t.group_size = type == DType::Q8_G ? 4 : 0;
        CHECK(dequantize(t).empty());
    }
}
