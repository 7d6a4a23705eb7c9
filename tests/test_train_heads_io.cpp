// Medusa head files: save/load round trip in Medusa's Hugging Face layout, other dtypes and the
// "medusa_head." prefix, and refusal of heads that do not fit the model.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gpu_fixture.h"
#include "llm/medusa_heads_io.h"
#include "model/dequantize.h"
#include "model/safetensors_file.h"
#include "model/half_float.h"

using namespace medusa;
namespace fs = std::filesystem;

namespace {
MedusaHeads random_heads(int k, int layers, int dim, int vocab) {
    MedusaHeads h;
    h.dim = dim, h.vocab = vocab, h.layers = layers, h.source = "test";
    uint32_t seed = 1;
    for (int i = 0; i < k; ++i) {
        MedusaHead head;
        for (int l = 0; l < layers; ++l) {
            head.w1.push_back(test::random_floats(size_t(dim) * dim, seed++));
            head.b1.push_back(test::random_floats(dim, seed++));
        }
        head.w2 = test::random_floats(size_t(vocab) * dim, seed++);
        h.heads.push_back(std::move(head));
    }
    return h;
}
fs::path temp_dir(const char* name) {
    const fs::path d = fs::temp_directory_path() / (std::string("medusa_test_") + name + "_" + std::to_string(getpid()));
    fs::remove_all(d);
    return d;
}
LlamaConfig config(int dim, int vocab) {
    LlamaConfig c;
    c.dim = dim, c.vocab_size = vocab;
    return c;
}
}  // namespace

TEST_CASE("trained heads round-trip through Medusa's safetensors layout", "[train]") {
    const MedusaHeads h = random_heads(3, 2, 8, 20);
    const fs::path dir = temp_dir("heads_io");
    save_medusa_heads(h, dir.string());
    // Keys and shapes as Medusa's own code names them.
    const SafetensorsFile f = SafetensorsFile::open((dir / "medusa_lm_head.safetensors").string());
    CHECK(f.tensors().size() == 3 * (2 * 2 + 1));
    CHECK(f.get("0.0.linear.weight").shape == std::vector<int64_t>{8, 8});
    CHECK(f.get("2.1.linear.bias").shape == std::vector<int64_t>{8});
    CHECK(f.get("1.2.weight").shape == std::vector<int64_t>{20, 8});
    CHECK(dequantize(f.get("1.2.weight")) == h.heads[1].w2);
    const auto cfg_json = nlohmann::json::parse(std::ifstream(dir / "config.json"));
    CHECK(cfg_json["medusa_num_heads"] == 3);
    CHECK(cfg_json["medusa_num_layers"] == 2);
    // Loading gives back exactly what was saved, from the folder or the file.
    for (const fs::path& p : {dir, dir / "medusa_lm_head.safetensors"}) {
        const MedusaHeads g = load_medusa_heads(p.string(), config(8, 20));
        REQUIRE(g.count() == 3);
        CHECK(g.layers == 2);
        for (int k = 0; k < 3; ++k) {
            CHECK(g.heads[k].w1 == h.heads[k].w1);
            CHECK(g.heads[k].b1 == h.heads[k].b1);
            CHECK(g.heads[k].w2 == h.heads[k].w2);
        }
    }
    // Heads for another model are refused, naming the file.
    CHECK_THROWS_WITH(load_medusa_heads(dir.string(), config(16, 20)),
                      Catch::Contains("medusa_lm_head.safetensors") && Catch::Contains("hidden size 8"));
    CHECK_THROWS_WITH(load_medusa_heads(dir.string(), config(8, 32)), Catch::Contains("vocabulary of 20"));
    fs::remove_all(dir);
}

TEST_CASE("Medusa head files in F16 and BF16 with the medusa_head. prefix load", "[train]") {
    const MedusaHeads h = random_heads(2, 1, 4, 6);
    for (DType type : {DType::F16, DType::BF16}) {
        std::vector<std::vector<uint16_t>> store;
        std::vector<Tensor> ts;
        auto add = [&](const std::string& name, const std::vector<float>& v, std::vector<int64_t> shape) {
            std::vector<uint16_t> u;
            for (float x : v) u.push_back(type == DType::F16 ? float_to_half(x) : float_to_bf16(x));
            store.push_back(std::move(u));
            Tensor t;
            t.name = "medusa_head." + name;
            t.type = type;
            t.shape = std::move(shape);
            t.data = reinterpret_cast<const uint8_t*>(store.back().data());
            t.nbytes = store.back().size() * 2;
            ts.push_back(t);
        };
        store.reserve(16);
        for (int k = 0; k < 2; ++k) {
            add(std::to_string(k) + ".0.linear.weight", h.heads[k].w1[0], {4, 4});
            add(std::to_string(k) + ".0.linear.bias", h.heads[k].b1[0], {4});
            add(std::to_string(k) + ".1.weight", h.heads[k].w2, {6, 4});
        }
        const fs::path dir = temp_dir("heads_half");
        fs::create_directories(dir);
        write_safetensors((dir / "medusa_lm_head.safetensors").string(), ts);  // no config.json: counted from keys
        const MedusaHeads g = load_medusa_heads(dir.string(), config(4, 6));
        CHECK(g.count() == 2);
        CHECK(g.layers == 1);
        const float tol = type == DType::F16 ? 1e-3f : 1e-2f;
        CHECK(test::max_abs_diff(g.heads[1].w2.data(), h.heads[1].w2.data(), 24) < tol);
        CHECK(test::max_abs_diff(g.heads[0].b1[0].data(), h.heads[0].b1[0].data(), 4) < tol);
        fs::remove_all(dir);
    }
}
