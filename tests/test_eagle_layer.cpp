// EAGLE's draft layer: files in EAGLE's layout round-trip with its key names and shapes, a layer
// for another model is refused, and the CPU layer's cache gives the same outputs run at once
// or token by token.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "gpu_fixture.h"
#include "llm/eagle_layer.h"
#include "llm/eagle_layer_io.h"
#include "model/dequantize.h"
#include "model/load_model.h"
#include "model/safetensors_file.h"
#include "model/synthetic_model.h"
#include "test_paths.h"

using namespace medusa;
namespace fs = std::filesystem;

namespace {

EagleLayer random_layer(const LlamaConfig& cfg, uint64_t seed) {
    EagleLayer e = EagleLayer::init(cfg, seed);
    uint32_t s = uint32_t(seed);
    for (auto* w : {&e.fc_w, &e.fc_b, &e.wq, &e.wk, &e.wv, &e.wo, &e.post_norm, &e.w_gate, &e.w_up, &e.w_down})
        *w = test::random_floats(w->size(), s++, 0.3f);
    return e;
}

fs::path temp_dir(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / (name + "_" + std::to_string(getpid()));
    fs::remove_all(d);
    return d;
}

}  // namespace

TEST_CASE("an EAGLE layer round-trips through EAGLE's layout with its key names and shapes", "[eagle]") {
    const ModelFile target = load_model(test::model_path("stories260K.bin"));
    const EagleLayer e = random_layer(target.config, 7);
    const fs::path dir = temp_dir("medusa_eagle_io");
    save_eagle_layer(e, dir.string(), target.path);
    const SafetensorsFile f = SafetensorsFile::open((dir / "model.safetensors").string());
    const int64_t d = 64, kv = 32, h = 172;
    const std::vector<std::pair<std::string, std::vector<int64_t>>> keys = {
        {"fc.weight", {d, 2 * d}},
        {"fc.bias", {d}},
        {"layers.0.self_attn.q_proj.weight", {d, d}},
        {"layers.0.self_attn.k_proj.weight", {kv, d}},
        {"layers.0.self_attn.v_proj.weight", {kv, d}},
        {"layers.0.self_attn.o_proj.weight", {d, d}},
        {"layers.0.mlp.gate_proj.weight", {h, d}},
        {"layers.0.mlp.up_proj.weight", {h, d}},
        {"layers.0.mlp.down_proj.weight", {d, h}},
        {"layers.0.post_attention_layernorm.weight", {d}}};
    CHECK(f.tensors().size() == keys.size());
    for (const auto& [key, shape] : keys) {
        CAPTURE(key);
        REQUIRE(f.find(key));
        CHECK(f.find(key)->shape == shape);
    }
    const EagleLayer back = load_eagle_layer(dir.string(), target.config);
    CHECK(back.wq == e.wq);  // q/k rows went to HF's order on disk and came back
    CHECK(back.wk == e.wk);
    CHECK(back.fc_w == e.fc_w);
    CHECK(back.w_down == e.w_down);
    CHECK(back.post_norm == e.post_norm);
    // On disk q is in rotate_half order: a row other than the first of a head moved.
    const auto stored = dequantize(*f.find("layers.0.self_attn.q_proj.weight"));
    CHECK(stored != e.wq);
    fs::remove_all(dir);
}

TEST_CASE("an EAGLE layer for another hidden size is refused, naming both sizes", "[eagle]") {
    const ModelFile target = load_model(test::model_path("stories260K.bin"));
    const ModelFile other = make_synthetic_model("stories15m", DType::F32);  // hidden size 288
    const fs::path dir = temp_dir("medusa_eagle_other");
    save_eagle_layer(EagleLayer::init(other.config, 1), dir.string(), "stories15m");
    try {
        load_eagle_layer(dir.string(), target.config);
        FAIL("accepted an EAGLE layer of hidden size 288 for a model of 64");
    } catch (const FormatError& err) {
        const std::string m = err.what();
        CHECK(m.find("288") != std::string::npos);
        CHECK(m.find("64") != std::string::npos);
        CHECK(m.find("config.json") != std::string::npos);
    }
    // A missing tensor names the file and the key.
    save_eagle_layer(EagleLayer::init(target.config, 1), dir.string(), target.path);
    {
        std::ofstream(dir / "config.json") << R"({"hidden_size": 64, "intermediate_size": 172,
            "num_attention_heads": 8, "num_key_value_heads": 4, "num_hidden_layers": 2})";
    }
    CHECK_THROWS_WITH(load_eagle_layer(dir.string(), target.config), Catch::Contains("2 decoder layers"));
    fs::remove_all(dir);
}

// Found by fuzz/fuzz_eagle_config.cpp: positive doubles that are 0 or infinity as floats.
TEST_CASE("an EAGLE config.json with an epsilon or RoPE base no float holds, or odd heads, is refused naming the file", "[eagle]") {
    const ModelFile target = load_model(test::model_path("stories260K.bin"));
    const fs::path dir = temp_dir("medusa_eagle_extremes");
    save_eagle_layer(EagleLayer::init(target.config, 1), dir.string(), target.path);
    const std::string shape = R"({"hidden_size": 64, "intermediate_size": 172, "num_attention_heads": 8,
        "num_key_value_heads": 4, )";
    for (const auto& [value, key] : std::vector<std::pair<std::string, std::string>>{
             {R"("rms_norm_eps": 1e-60})", "'rms_norm_eps' = 1e-60 is out of range"},
             {R"("rms_norm_eps": 2.0})", "'rms_norm_eps' = 2.0 is out of range"},
             {R"("rope_theta": 1e300})", "'rope_theta' = 1e+300 is out of range"},
             {R"("rope_theta": 0.5})", "'rope_theta' = 0.5 is out of range"}}) {
        std::ofstream(dir / "config.json") << shape + value;
        CHECK_THROWS_WITH(load_eagle_layer(dir.string(), target.config),
                          Catch::Contains((dir / "config.json").string()) && Catch::Contains(key));
    }
    // Found by fuzz_eagle_config too: heads of odd size threw std::invalid_argument from the q/k re-ordering.
    std::ofstream(dir / "config.json") << R"({"hidden_size": 64, "intermediate_size": 172, "num_attention_heads": 64})";
    CHECK_THROWS_WITH(load_eagle_layer(dir.string(), target.config),
                      Catch::Contains((dir / "config.json").string()) && Catch::Contains("heads of 1 are not an even size"));
    std::ofstream(dir / "config.json") << shape + R"("rms_norm_eps": 1e-5, "rope_theta": 1e6})";
    const EagleLayer e = load_eagle_layer(dir.string(), target.config);
    CHECK(e.rms_eps == 1e-5f);
    CHECK(e.rope_theta == 1e6f);
    fs::remove_all(dir);
}

TEST_CASE("the CPU EAGLE layer gives the same outputs for a sequence at once or token by token", "[eagle]") {
    const ModelFile target = load_model(test::model_path("stories260K.bin"));
    const EagleLayer e = random_layer(target.config, 3);
    const std::vector<int> tokens = {5, 80, 17, 300, 42, 9};
    const auto features = test::random_floats(tokens.size() * 64, 11, 1.0f);
    CpuEagleModel whole(e, target, 64), steps(e, target, 64);
    whole.forward(TokenBlock::causal(0, tokens), features);
    for (size_t t = 0; t < tokens.size(); ++t) {
        steps.forward(TokenBlock::causal(int(t), {tokens[t]}), std::span<const float>(&features[t * 64], 64));
        CHECK(test::max_abs_diff(whole.output(int(t)).data(), steps.output(0).data(), 64) < 1e-5f);
        CHECK(test::max_abs_diff(whole.logits(int(t)).data(), steps.logits(0).data(), 512) < 1e-4f);
    }
    // The fresh layer passes the feature through fc: its prediction stays close to f_i.
    CpuEagleModel fresh(EagleLayer::init(target.config, 1), target, 64);
    fresh.forward(TokenBlock::causal(0, tokens), features);
    CHECK(test::max_abs_diff(fresh.output(2).data(), &features[2 * 64], 64) < 0.5f);
}
