// Model file loaders against the real shared files. Expectations come from the files' own bytes
// read here independently, or from one format agreeing with another.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "model/dequantize.h"
#include "model/hf_loader.h"
#include "model/load_model.h"
#include "model/model_file.h"
#include "model/safetensors_file.h"
#include "model/half_float.h"
#include "config_checks.h"
#include "test_paths.h"

using namespace medusa;
using medusa::test::model_path;
namespace fs = std::filesystem;

namespace {

std::vector<uint8_t> slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    REQUIRE(f.good());
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

std::vector<int32_t> header_ints(const std::string& path, size_t offset, int count) {
    const auto b = slurp(path);
    std::vector<int32_t> v(static_cast<size_t>(count));
    std::memcpy(v.data(), b.data() + offset, size_t(count) * 4);
    return v;
}

std::vector<std::string> canonical_names(const LlamaConfig& c) {
    std::vector<std::string> n = {"tok_embeddings", "norm"};
    for (int l = 0; l < c.n_layers; ++l)
        for (const char* w : {"attention_norm", "ffn_norm", "wq", "wk", "wv", "wo", "w1", "w2", "w3"})
            n.push_back("layers." + std::to_string(l) + "." + w);
    return n;
}

std::vector<float> floats(const Tensor& t) {
    REQUIRE(t.type == DType::F32);
    std::vector<float> v(t.nbytes / 4);
    std::memcpy(v.data(), t.data, t.nbytes);
    return v;
}

// The largest |a - b| over each row, divided by the row's largest |b|.
double max_row_relative_error(const std::vector<float>& a, const std::vector<float>& b, int64_t cols) {
    REQUIRE(a.size() == b.size());
    double worst = 0;
    for (size_t r = 0; r * cols < b.size(); ++r) {
        double err = 0, mx = 0;
        for (int64_t c = 0; c < cols; ++c) {
            err = std::max(err, double(std::fabs(a[r * cols + c] - b[r * cols + c])));
            mx = std::max(mx, double(std::fabs(b[r * cols + c])));
        }
        if (mx > 0) worst = std::max(worst, err / mx);
    }
    return worst;
}

struct TempDir {
    fs::path path;
    TempDir() {
        path = fs::temp_directory_path() / ("medusa-loaders-" + std::to_string(::getpid()) + "-" +
                                           std::to_string(reinterpret_cast<uintptr_t>(this)));
        fs::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

}  // namespace

TEST_CASE("llama2.c fp32 headers give the configuration", "[loaders]") {
    struct Case {
        const char* file;
        std::vector<int32_t> expect;  // dim, hidden, layers, heads, kv_heads, vocab, seq_len
    };
    for (const Case& c : {Case{"stories260K.bin", {64, 172, 5, 8, 4, 512, 512}},
                          Case{"llama2xs.bin", {64, 192, 5, 8, 4, 512, 256}}}) {
        CAPTURE(c.file);
        const auto h = header_ints(model_path(c.file), 0, 7);
        REQUIRE(h == c.expect);
        const ModelFile m = load_model(model_path(c.file));
        CHECK(m.format == ModelFormat::Llama2cV0);
        CHECK(m.path == model_path(c.file));
        const LlamaConfig& k = m.config;
        CHECK(std::vector<int32_t>{k.dim, k.hidden_dim, k.n_layers, k.n_heads, k.n_kv_heads, k.vocab_size, k.seq_len} ==
              h);
        CHECK(k.tied_classifier);  // positive vocab_size in the header
        CHECK(m.find("output") == nullptr);
        CHECK(&m.classifier() == m.find("tok_embeddings"));
        CHECK(m.embedded_tokenizer.empty());
        // run.c's layout: the final norm sits right before the RoPE tables, which end the file.
        const int64_t head = k.dim / k.n_heads;
        const auto bytes = slurp(model_path(c.file));
        const size_t norm_at = bytes.size() - size_t(k.seq_len * head) * 4 - size_t(k.dim) * 4;
        const Tensor& norm = m.get("norm");
        CHECK(std::memcmp(norm.data, bytes.data() + norm_at, size_t(k.dim) * 4) == 0);
        CHECK(std::memcmp(m.get("tok_embeddings").data, bytes.data() + 28, 4 * 64) == 0);
        for (const auto& name : canonical_names(k)) CHECK(m.get(name).type == DType::F32);
    }
}

TEST_CASE("llama2.c v0 with an untied classifier reads it after the RoPE tables", "[loaders]") {
    // A tiny model whose every tensor holds its own index, so a misplaced pointer shows.
    const int dim = 8, hid = 16, L = 2, heads = 2, kv = 1, vocab = 10, seq = 4, head = dim / heads;
    std::vector<int32_t> hdr = {dim, hid, L, heads, kv, -vocab, seq};
    std::vector<uint8_t> file(28);
    std::memcpy(file.data(), hdr.data(), 28);
    float tag = 0;
    auto put = [&](int64_t n, float v) {
        for (int64_t i = 0; i < n; ++i) {
            const size_t at = file.size();
            file.resize(at + 4);
            std::memcpy(&file[at], &v, 4);
        }
    };
    const int64_t sizes[] = {int64_t(vocab) * dim, int64_t(L) * dim,       int64_t(L) * dim * dim,
                             int64_t(L) * head * kv * dim, int64_t(L) * head * kv * dim, int64_t(L) * dim * dim,
                             int64_t(L) * dim,        int64_t(L) * hid * dim, int64_t(L) * hid * dim,
                             int64_t(L) * hid * dim,  dim};
    for (int64_t n : sizes) put(n, ++tag);
    put(int64_t(seq) * head, -1.0f);  // freq_cis_real and imag: seq_len * head_size / 2 each
    put(int64_t(vocab) * dim, 99.0f);
    const ModelFile m = load_model_from_memory(std::make_shared<std::vector<uint8_t>>(file), "tiny.bin");
    CHECK_FALSE(m.config.tied_classifier);
    CHECK(m.config.vocab_size == vocab);
    CHECK(floats(m.get("tok_embeddings"))[0] == 1.0f);
    CHECK(floats(m.get("layers.1.attention_norm"))[0] == 2.0f);
    CHECK(floats(m.get("layers.1.wk"))[0] == 4.0f);
    CHECK(floats(m.get("layers.0.ffn_norm"))[0] == 7.0f);
    CHECK(floats(m.get("layers.1.w3")).back() == 10.0f);
    CHECK(floats(m.get("norm"))[0] == 11.0f);
    const auto out = floats(m.classifier());
    CHECK(out.size() == size_t(vocab * dim));
    CHECK(out.front() == 99.0f);
    CHECK(out.back() == 99.0f);
}

TEST_CASE("llama2.c int8 (version 2) file matches the fp32 file", "[loaders]") {
    const std::string path = model_path("stories260K_q80.bin");
    const auto bytes = slurp(path);
    uint32_t magic;
    std::memcpy(&magic, bytes.data(), 4);
    REQUIRE(magic == 0x616b3432);
    const auto cfg = header_ints(path, 8, 7);
    int32_t group;
    std::memcpy(&group, bytes.data() + 37, 4);

    const ModelFile q = load_model(path);
    const ModelFile f = load_model(model_path("stories260K.bin"));
    CHECK(q.format == ModelFormat::Llama2cV2);
    CHECK(q.config.dim == cfg[0]);
    CHECK(q.config.hidden_dim == cfg[1]);
    CHECK(q.config.vocab_size == cfg[5]);
    CHECK(q.config.tied_classifier == (bytes[36] != 0));
    CHECK(q.config.dim == f.config.dim);
    CHECK(q.config.hidden_dim == f.config.hidden_dim);
    CHECK(q.config.n_kv_heads == f.config.n_kv_heads);
    CHECK(q.config.seq_len == f.config.seq_len);
    for (const auto& name : canonical_names(f.config)) {
        CAPTURE(name);
        const Tensor& qt = q.get(name);
        const Tensor& ft = f.get(name);
        REQUIRE(qt.shape == ft.shape);
        if (ft.shape.size() == 1) {  // norms stay fp32, bit for bit
            REQUIRE(qt.type == DType::F32);
            CHECK(std::memcmp(qt.data, ft.data, ft.nbytes) == 0);
            continue;
        }
        REQUIRE(qt.type == DType::Q8_G);
        REQUIRE(qt.group_size == group);
        const auto a = dequantize(qt), b = floats(ft);
        // Symmetric int8 per group: the error is at most half a step, step = group max / 127.
        for (size_t g = 0; g < b.size(); g += size_t(group)) {
            float mx = 0, err = 0;
            for (size_t i = g; i < g + size_t(group); ++i) {
                mx = std::max(mx, std::fabs(b[i]));
                err = std::max(err, std::fabs(a[i] - b[i]));
            }
            REQUIRE(err <= mx / 127.0f * 0.5f * 1.001f + 1e-12f);
        }
    }
}

TEST_CASE("GGUF f32 files equal the llama2.c files bit for bit", "[loaders]") {
    for (const char* model : {"stories260K", "llama2xs"}) {
        CAPTURE(model);
        const ModelFile g = load_model(model_path(std::string("gguf/") + model + "-f32.gguf"));
        const ModelFile f = load_model(model_path(std::string(model) + ".bin"));
        CHECK(g.format == ModelFormat::Gguf);
        const LlamaConfig &a = g.config, &b = f.config;
        medusa::test::check_same_shapes(a, b);
        CHECK(a.rope_theta == 10000.0f);
        CHECK(a.rms_eps == 1e-5f);
        CHECK_FALSE(a.tied_classifier);  // the converter writes output.weight, a copy of the embedding
        CHECK_FALSE(g.embedded_tokenizer.empty());
        for (const auto& name : canonical_names(b)) {
            CAPTURE(name);
            const Tensor &gt = g.get(name), &ft = f.get(name);
            REQUIRE(gt.type == DType::F32);
            REQUIRE(gt.shape == ft.shape);
            REQUIRE(gt.nbytes == ft.nbytes);
            CHECK(std::memcmp(gt.data, ft.data, ft.nbytes) == 0);
        }
        const Tensor& out = g.classifier();
        REQUIRE(out.nbytes == f.classifier().nbytes);
        CHECK(std::memcmp(out.data, f.classifier().data, out.nbytes) == 0);
    }
}

TEST_CASE("GGUF f16 files equal the fp32 weights within half precision", "[loaders]") {
    for (const char* model : {"stories260K", "llama2xs"}) {
        CAPTURE(model);
        const ModelFile g = load_model(model_path(std::string("gguf/") + model + "-f16.gguf"));
        const ModelFile f = load_model(model_path(std::string(model) + ".bin"));
        auto names = canonical_names(f.config);
        names.push_back("output");
        for (const auto& name : names) {
            CAPTURE(name);
            const Tensor& gt = g.get(name);
            const Tensor& ft = name == "output" ? f.classifier() : f.get(name);
            REQUIRE(gt.shape == ft.shape);
            // Each tensor keeps its stored type: the converter leaves the norms in f32.
            CHECK(gt.type == (gt.shape.size() == 1 ? DType::F32 : DType::F16));
            const auto a = dequantize(gt), b = floats(ft);
            REQUIRE(a.size() == b.size());
            for (size_t i = 0; i < b.size(); ++i) {
                // Round to nearest: half a unit in the last of 11 significant bits, or of the subnormal step.
                const float tol = std::max(std::fabs(b[i]) * 0.00049f, 3.0e-8f);
                if (std::fabs(a[i] - b[i]) > tol) FAIL("element " << i << ": " << a[i] << " vs " << b[i]);
            }
        }
    }
}

TEST_CASE("GGUF q8_0 and q4_0 files are close to the fp32 weights", "[loaders]") {
    const ModelFile f = load_model(model_path("llama2xs.bin"));
    struct Case {
        const char* file;
        DType matrices;
        double tol;  // max abs error over a row / the row's max abs value
    };
    // q8_0: half a step of max/127 (+ the f16 scale's rounding); q4_0: the side opposite the
    // block's extreme value clamps to 7 steps of max/8, one full step.
    for (const Case& c : {Case{"gguf/llama2xs-q8_0.gguf", DType::Q8_0, 0.0045},
                          Case{"gguf/llama2xs-q4_0.gguf", DType::Q4_0, 0.13}}) {
        CAPTURE(c.file);
        const ModelFile g = load_model(model_path(c.file));
        for (const auto& name : canonical_names(f.config)) {
            CAPTURE(name);
            const Tensor &gt = g.get(name), &ft = f.get(name);
            REQUIRE(gt.shape == ft.shape);
            if (gt.shape.size() == 1) {
                CHECK(gt.type == DType::F32);
                CHECK(std::memcmp(gt.data, ft.data, ft.nbytes) == 0);
                continue;
            }
            CHECK(gt.type == c.matrices);
            CHECK(gt.group_size == 32);
            CHECK(max_row_relative_error(dequantize(gt), floats(ft), gt.shape[1]) <= c.tol);
        }
        // llama-quantize keeps the classifier at 8 bits.
        const Tensor& out = g.get("output");
        CHECK(out.type == DType::Q8_0);
        CHECK(max_row_relative_error(dequantize(out), floats(f.classifier()), f.config.dim) <= 0.0045);
    }
}

TEST_CASE("dequantize decodes GGUF blocks as the format defines", "[loaders]") {
    // Blocks written here by hand: scale 0.5 (f16 0x3800).
    std::vector<uint8_t> q8(34), q4(18);
    q8[0] = 0x00, q8[1] = 0x38;
    for (int j = 0; j < 32; ++j) q8[2 + j] = uint8_t(int8_t(j - 16));
    q4[0] = 0x00, q4[1] = 0x38;
    for (int j = 0; j < 16; ++j) q4[2 + j] = uint8_t(j | (15 - j) << 4);
    Tensor t8{"q8", DType::Q8_0, {32}, 32, q8.data(), q8.size()};
    Tensor t4{"q4", DType::Q4_0, {32}, 32, q4.data(), q4.size()};
    const auto a = dequantize(t8), b = dequantize(t4);
    for (int j = 0; j < 32; ++j) CHECK(a[j] == 0.5f * float(j - 16));
    for (int j = 0; j < 16; ++j) {
        CHECK(b[j] == 0.5f * float(j - 8));
        CHECK(b[j + 16] == 0.5f * float(7 - j));
    }
    CHECK(half_to_float(0x3c00) == 1.0f);
    CHECK(half_to_float(0xc000) == -2.0f);
    CHECK(half_to_float(0x0001) == std::ldexp(1.0f, -24));
    CHECK(float_to_half(1.0f) == 0x3c00);
    CHECK(float_to_half(65504.0f) == 0x7bff);
    CHECK(float_to_half(1e6f) == 0x7c00);
    CHECK(bf16_to_float(0x3f80) == 1.0f);
    CHECK(float_to_bf16(1.0f) == 0x3f80);
    CHECK(float_to_bf16(1.00390625f) == 0x3f80);  // a tie rounds to even
    for (uint32_t h = 0; h < 0x7c00; h += 7) CHECK(float_to_half(half_to_float(uint16_t(h))) == h);
    Tensor short_data{"short", DType::Q8_0, {64}, 32, q8.data(), q8.size()};
    CHECK_THROWS_AS(dequantize(short_data), FormatError);
}

namespace {

// HF's own conversion from Meta's layout (convert_llama_weights_to_hf.py), written out here
// independently of the loader: w.view(heads, rows/heads/2, 2, cols).transpose(1, 2).
std::vector<float> hf_permute(const std::vector<float>& w, int64_t rows, int64_t cols, int heads) {
    const int64_t half = rows / heads / 2;
    std::vector<float> out(w.size());
    for (int64_t h = 0; h < heads; ++h)
        for (int64_t a = 0; a < 2; ++a)
            for (int64_t i = 0; i < half; ++i)
                for (int64_t c = 0; c < cols; ++c)
                    out[((h * 2 + a) * half + i) * cols + c] = w[((h * half + i) * 2 + a) * cols + c];
    return out;
}

// Writes the llama2.c model `f` as a Hugging Face checkpoint in `dir` (F32 or BF16 weights);
// `keep` owns the bytes until written.
void write_hf_model(const ModelFile& f, const fs::path& dir, DType type, bool sharded, bool lm_head,
                    std::vector<std::vector<uint8_t>>& keep) {
    const LlamaConfig& c = f.config;
    std::vector<Tensor> tensors;
    auto add = [&](const std::string& name, std::vector<float> v, std::vector<int64_t> shape) {
        std::vector<uint8_t> bytes;
        if (type == DType::F32) {
            bytes.resize(v.size() * 4);
            std::memcpy(bytes.data(), v.data(), bytes.size());
        } else {
            bytes.resize(v.size() * 2);
            for (size_t i = 0; i < v.size(); ++i) {
                const uint16_t b = float_to_bf16(v[i]);
                std::memcpy(&bytes[i * 2], &b, 2);
            }
        }
        keep.push_back(std::move(bytes));
        tensors.push_back({name, type, shape, 0, keep.back().data(), keep.back().size()});
    };
    add("model.embed_tokens.weight", floats(f.get("tok_embeddings")), {c.vocab_size, c.dim});
    add("model.norm.weight", floats(f.get("norm")), {c.dim});
    if (lm_head) add("lm_head.weight", floats(f.classifier()), {c.vocab_size, c.dim});
    const struct {
        const char *hf, *ours;
    } map[] = {{"input_layernorm", "attention_norm"}, {"post_attention_layernorm", "ffn_norm"},
               {"self_attn.q_proj", "wq"},           {"self_attn.k_proj", "wk"},
               {"self_attn.v_proj", "wv"},           {"self_attn.o_proj", "wo"},
               {"mlp.gate_proj", "w1"},              {"mlp.down_proj", "w2"},
               {"mlp.up_proj", "w3"}};
    for (int l = 0; l < c.n_layers; ++l)
        for (const auto& e : map) {
            const Tensor& t = f.get("layers." + std::to_string(l) + "." + e.ours);
            auto v = floats(t);
            if (std::string(e.ours) == "wq") v = hf_permute(v, t.shape[0], t.shape[1], c.n_heads);
            if (std::string(e.ours) == "wk") v = hf_permute(v, t.shape[0], t.shape[1], c.n_kv_heads);
            add("model.layers." + std::to_string(l) + "." + e.hf + ".weight", v, t.shape);
        }
    std::ofstream(dir / "config.json")
        << "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\", \"hidden_act\": \"silu\","
        << "\"hidden_size\": " << c.dim << ", \"intermediate_size\": " << c.hidden_dim
        << ", \"num_hidden_layers\": " << c.n_layers << ", \"num_attention_heads\": " << c.n_heads
        << ", \"num_key_value_heads\": " << c.n_kv_heads << ", \"vocab_size\": " << c.vocab_size
        << ", \"max_position_embeddings\": " << c.seq_len << ", \"rms_norm_eps\": 1e-05, \"rope_theta\": 10000.0,"
        << "\"tie_word_embeddings\": " << (lm_head ? "false" : "true") << ", \"torch_dtype\": \"float32\"}";
    if (!sharded) {
        write_safetensors((dir / "model.safetensors").string(), tensors, {{"format", "pt"}});
        return;
    }
    const size_t split = tensors.size() / 2;
    const std::vector<Tensor> a(tensors.begin(), tensors.begin() + split), b(tensors.begin() + split, tensors.end());
    write_safetensors((dir / "model-00001-of-00002.safetensors").string(), a, {{"format", "pt"}});
    write_safetensors((dir / "model-00002-of-00002.safetensors").string(), b, {{"format", "pt"}});
    std::ofstream idx(dir / "model.safetensors.index.json");
    idx << "{\"metadata\": {\"total_size\": 0}, \"weight_map\": {";
    for (size_t i = 0; i < tensors.size(); ++i)
        idx << (i ? "," : "") << "\"" << tensors[i].name << "\": \"model-0000" << (i < split ? 1 : 2)
            << "-of-00002.safetensors\"";
    idx << "}}";
}

}  // namespace

TEST_CASE("Hugging Face safetensors models load in llama2.c's RoPE convention", "[loaders]") {
    const ModelFile f = load_model(model_path("stories260K.bin"));
    for (bool sharded : {false, true}) {
        for (bool lm_head : {false, true}) {
            CAPTURE(sharded, lm_head);
            TempDir dir;
            std::vector<std::vector<uint8_t>> keep;
            write_hf_model(f, dir.path, DType::F32, sharded, lm_head, keep);
            const ModelFile h = load_model(dir.path.string());
            CHECK(h.format == ModelFormat::Safetensors);
            CHECK(h.config.dim == 64);
            CHECK(h.config.hidden_dim == 172);
            CHECK(h.config.n_kv_heads == 4);
            CHECK(h.config.seq_len == 512);
            CHECK(h.config.tied_classifier == !lm_head);
            for (const auto& name : canonical_names(f.config)) {
                CAPTURE(name);
                const Tensor &ht = h.get(name), &ft = f.get(name);
                REQUIRE(ht.type == DType::F32);
                REQUIRE(ht.shape == ft.shape);
                CHECK(std::memcmp(ht.data, ft.data, ft.nbytes) == 0);
            }
            CHECK(std::memcmp(h.classifier().data, f.classifier().data, f.classifier().nbytes) == 0);
            if (!sharded) {  // one .safetensors file with config.json beside it
                const ModelFile single = load_model((dir.path / "model.safetensors").string());
                CHECK(std::memcmp(single.get("layers.3.wk").data, f.get("layers.3.wk").data,
                                  f.get("layers.3.wk").nbytes) == 0);
            }
        }
    }
}

TEST_CASE("Hugging Face bf16 weights dequantize to the rounded fp32 weights", "[loaders]") {
    const ModelFile f = load_model(model_path("stories260K.bin"));
    TempDir dir;
    std::vector<std::vector<uint8_t>> keep;
    write_hf_model(f, dir.path, DType::BF16, false, false, keep);
    const ModelFile h = load_model(dir.path.string());
    for (const auto& name : canonical_names(f.config)) {
        CAPTURE(name);
        const Tensor& ht = h.get(name);
        REQUIRE(ht.type == DType::BF16);
        const auto a = dequantize(ht), b = floats(f.get(name));
        bool same = true;
        for (size_t i = 0; i < b.size(); ++i) same = same && a[i] == float_to_bf16_float(b[i]);
        CHECK(same);
    }
}

TEST_CASE("safetensors files round-trip tensors and metadata", "[loaders]") {
    TempDir dir;
    std::vector<float> w = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, -8.5f};
    std::vector<uint16_t> h = {float_to_half(1.0f), float_to_half(-0.5f)};
    std::vector<Tensor> tensors = {
        {"heads.0.weight", DType::F32, {2, 3}, 0, reinterpret_cast<const uint8_t*>(w.data()), w.size() * 4},
        {"bias", DType::F16, {2}, 0, reinterpret_cast<const uint8_t*>(h.data()), h.size() * 2},
        {"empty", DType::F32, {0, 4}, 0, nullptr, 0}};
    const std::string path = (dir.path / "heads.safetensors").string();
    write_safetensors(path, tensors, {{"medusa_num_heads", "1"}});
    const auto bytes = slurp(path);
    uint64_t header;
    std::memcpy(&header, bytes.data(), 8);
    CHECK((8 + header) % 8 == 0);
    CHECK(bytes.size() == 8 + header + w.size() * 4 + h.size() * 2);
    const SafetensorsFile f = SafetensorsFile::open(path);
    CHECK(f.path() == path);
    CHECK(f.metadata().at("medusa_num_heads") == "1");
    REQUIRE(f.tensors().size() == 3);
    const Tensor& a = f.get("heads.0.weight");
    CHECK(a.type == DType::F32);
    CHECK(a.shape == std::vector<int64_t>{2, 3});
    CHECK(dequantize(a) == w);
    CHECK(dequantize(f.get("bias")) == std::vector<float>{1.0f, -0.5f});
    CHECK(f.get("empty").numel() == 0);
    CHECK(f.find("nope") == nullptr);
    CHECK_THROWS_AS(f.get("nope"), FormatError);
}
