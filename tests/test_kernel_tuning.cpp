// The kernel tuner's cache: what `bench --tune-kernels` keeps is what a model opened later on the
// same device uses, other entries survive a save, and a damaged file is an error naming it.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>

#include "cache_env.h"
#include "captured_warnings.h"
#include "model/load_model.h"
#include "scoped_env.h"
#include "cli_runner.h"
#include "greedy_reference.h"
#include "gpu_fixture.h"
#include "llm/attention_splits.h"
#include "llm/cpu_reference.h"
#include "llm/gpu_model.h"
#include "llm/kernel_params.h"
#include "llm/kernel_tuning.h"
#include "temp_dir.h"
#include "test_paths.h"

using namespace medusa;
using medusa::test::gpu_context;
using medusa::test::model_path;

namespace {

void write_text(const std::filesystem::path& p, const std::string& text) {
    std::ofstream f(p);
    f << text;
}

// A device whose subgroups have 32 lanes and whose workgroups at most 1024.
constexpr MatmulLimits kWave32{32, 1024};

}  // namespace

TEST_CASE("a saved kernel configuration is loaded back and other entries are kept", "[kernel-tuning]") {
    test::TempDir dir("medusa-kernel-tuning");
    const std::string path = (dir.path / "sub" / "kernel-tuning.json").string();
    CHECK_FALSE(load_tuned_matmul(path, "dev", "q8_0 64x172x5 v512", kWave32));  // no file yet
    save_tuned_matmul(path, "dev", "q8_0 64x172x5 v512", {true, 128}, 32, {{"decode_ms_per_token", 1.5}});
    save_tuned_matmul(path, "dev", "f32 64x172x5 v512", {false, 32}, 32, {});
    save_tuned_matmul(path, "other dev", "q8_0 64x172x5 v512", {false, 256, 4}, 32, {});
    CHECK(load_tuned_matmul(path, "dev", "q8_0 64x172x5 v512", kWave32) == MatmulConfig{true, 128});
    CHECK(load_tuned_matmul(path, "dev", "f32 64x172x5 v512", kWave32) == MatmulConfig{false, 32});
    CHECK(load_tuned_matmul(path, "other dev", "q8_0 64x172x5 v512", kWave32) == MatmulConfig{false, 256, 4});
    CHECK_FALSE(load_tuned_matmul(path, "dev", "q4_0 64x172x5 v512", kWave32));
    save_tuned_matmul(path, "dev", "q8_0 64x172x5 v512", {false, 64}, 32, {});  // replaced
    CHECK(load_tuned_matmul(path, "dev", "q8_0 64x172x5 v512", kWave32) == MatmulConfig{false, 64});
    CHECK(load_tuned_matmul(path, "dev", "f32 64x172x5 v512", kWave32) == MatmulConfig{false, 32});
    CHECK(nlohmann::json::parse(test::slurp(path))["dev"]["f32 64x172x5 v512"]["subgroup"] == 32);
    // Quads are kept; an entry from before them takes the untuned choice.
    const MatmulConfig quads{false, 64, 2, 16, MatmulTile{}, true};
    save_tuned_matmul(path, "dev", "q4_k 64x172x5 v512", quads, 32, {});
    CHECK(load_tuned_matmul(path, "dev", "q4_k 64x172x5 v512", kWave32) == quads);
    CHECK(nlohmann::json::parse(test::slurp(path))["dev"]["q4_k 64x172x5 v512"]["quads"] == true);
    write_text(path, "{\"dev\": {\"m\": {\"texel\": false, \"workgroup\": 64}}}");
    CHECK(load_tuned_matmul(path, "dev", "m", kWave32, quads)->quads);
    CHECK_FALSE(load_tuned_matmul(path, "dev", "m", kWave32)->quads);
}

TEST_CASE("a kernel tuning file that is not a JSON object is an error naming it", "[kernel-tuning]") {
    test::TempDir dir("medusa-kernel-tuning-bad");
    const auto path = dir.path / "kernel-tuning.json";
    for (const auto& [text, why] : {std::pair{"{\"dev\": {\"m\": {\"texel\": true", "malformed JSON"},
                                    std::pair{"[1, 2]", "must be a JSON object"}}) {
        CAPTURE(text);
        write_text(path, text);
        CHECK_THROWS_WITH(load_tuned_matmul(path.string(), "dev", "m", kWave32),
                          Catch::Contains(path.string()) && Catch::Contains(why));
    }
}

TEST_CASE("a kernel tuning entry the device cannot run is ignored with one warning naming it", "[kernel-tuning]") {
    test::TempDir dir("medusa-kernel-tuning-entries");
    const auto path = dir.path / "kernel-tuning.json";
    const std::pair<const char*, const char*> cases[] = {
        {"{\"texel\": 1, \"workgroup\": 64}", "needs \"texel\""},
        {"{\"texel\": true}", "needs \"texel\""},
        {"{\"texel\": true, \"workgroup\": -64}", "needs \"texel\""},
        {"{\"texel\": true, \"workgroup\": 96}", "workgroup 96 is not a power of two"},
        // Below the subgroup size, or not whole subgroups: what printed garbage with exit 0.
        {"{\"texel\": true, \"workgroup\": 4}", "workgroup 4 is not a multiple of the device's subgroup size 32"},
        {"{\"texel\": false, \"workgroup\": 16, \"subgroup\": 16}", "tuned for subgroups of 16 lanes"},
        {"{\"texel\": false, \"workgroup\": 64, \"subgroup\": 64}", "tuned for subgroups of 64 lanes"},
        {"{\"texel\": true, \"workgroup\": 64, \"subgroup\": \"32\"}", "subgroup \"32\" is not a count"},
        {"{\"texel\": true, \"workgroup\": 4096}", "workgroup 4096 is more than the device's largest, 1024"},
        {"{\"texel\": true, \"workgroup\": 4294967360}", "needs \"texel\""},
        {"{\"texel\": true, \"workgroup\": 64, \"rows\": 0}", "rows 0 is not from 1 to 4"},
        {"{\"texel\": true, \"workgroup\": 64, \"rows\": 8}", "rows 8 is not from 1 to 4"},
        {"{\"texel\": true, \"workgroup\": 64, \"rows\": \"2\"}", "rows \"2\" is not a count"},
        // The tiled kernel's shape and threshold.
        {"{\"texel\": true, \"workgroup\": 64, \"tile\": \"65x32\", \"tiled_from\": 16}",
         "tile \"65x32\" is not one of 32x32, 64x32"},
        {"{\"texel\": true, \"workgroup\": 64, \"tile\": 64}", "tile 64 is not one of"},
        {"{\"texel\": true, \"workgroup\": 64, \"tiled_from\": \"16\"}", "tiled_from \"16\" is not a count"},
        {"{\"texel\": true, \"workgroup\": 64, \"tiled_from\": 200}", "tiled_from 200 is more than a block's 128 tokens"},
        // 27,904 bytes of shared memory where Vulkan guarantees 16,384.
        {"{\"texel\": true, \"workgroup\": 64, \"tile\": \"128x64\", \"tiled_from\": 16}",
         "tile 128x64 needs 27904 bytes of shared memory, more than the device's 16384"},
        {"{\"texel\": true, \"workgroup\": 64, \"quads\": 1}", "quads 1 is not true or false"},
        // The matrix units' tile on a device without them.
        {"{\"texel\": true, \"workgroup\": 64, \"tile\": \"coop64x64\", \"tiled_from\": 16}",
         "tile coop64x64 needs the device's matrix units (VK_NV_cooperative_matrix"},
    };
    for (const auto& [entry, why] : cases) {
        CAPTURE(entry);
        write_text(path, std::string("{\"dev\": {\"m\": ") + entry + ", \"other\": {\"texel\": true}}}");
        test::CapturedWarnings warnings;
        CHECK_FALSE(load_tuned_matmul(path.string(), "dev", "m", kWave32));
        CHECK_FALSE(load_tuned_matmul(path.string(), "dev", "m", kWave32));  // the same entry: said once
        REQUIRE(warnings.lines.size() == 1);
        CHECK_THAT(warnings.lines[0], Catch::Contains(path.string()) && Catch::Contains("'m'") && Catch::Contains(why) &&
                                          Catch::Contains("ignored"));
        CHECK(warnings.lines[0].find('\n') == std::string::npos);
    }
    // Entries written before the subgroup size was kept are used where the device can run them.
    write_text(path, "{\"dev\": {\"m\": {\"texel\": true, \"workgroup\": 64, \"rows\": 2}}}");
    test::CapturedWarnings warnings;
    CHECK(load_tuned_matmul(path.string(), "dev", "m", kWave32) == MatmulConfig{true, 64, 2});
    CHECK(load_tuned_matmul(path.string(), "dev", "m", {64, 1024}) == MatmulConfig{true, 64, 2});
    CHECK_FALSE(load_tuned_matmul(path.string(), "dev", "m", {128, 1024}));
    CHECK(warnings.lines.size() == 1);
}

TEST_CASE("a tuned tiling is kept and read back, and an entry from before tiling takes the untuned one",
          "[kernel-tuning][tiled]") {
    test::TempDir dir("medusa-kernel-tuning-tiles");
    const std::string path = (dir.path / "kernel-tuning.json").string();
    const MatmulConfig tiled{false, 64, 2, 24, MatmulTile{32, 32, 2, 4}};
    save_tuned_matmul(path, "dev", "m", tiled, 32, {});
    CHECK(load_tuned_matmul(path, "dev", "m", kWave32) == tiled);
    const auto saved = nlohmann::json::parse(test::slurp(path))["dev"]["m"];
    CHECK(saved["tile"] == "32x32");
    CHECK(saved["tiled_from"] == 24);
    const MatmulConfig untiled{false, 64, 1, 0, MatmulTile{}};
    save_tuned_matmul(path, "dev", "m", untiled, 32, {});
    CHECK(load_tuned_matmul(path, "dev", "m", kWave32, tiled) == untiled);  // "never" is kept as such
    write_text(path, "{\"dev\": {\"m\": {\"texel\": true, \"workgroup\": 64}}}");
    const std::optional<MatmulConfig> old = load_tuned_matmul(path, "dev", "m", kWave32, tiled);
    REQUIRE(old);
    const MatmulConfig got = *old;
    CHECK(got.tiled_from == 24);
    CHECK(got.tile == tiled.tile);
    CHECK(got.workgroup == 64);
}

TEST_CASE("MEDUSA_TILED_MATMUL sets the tiling, and a value it cannot read is one error naming it",
          "[kernel-tuning][tiled]") {
    MatmulConfig c{true, 64, 1, 16, MatmulTile{}};
    {
        test::ScopedEnv unset("MEDUSA_TILED_MATMUL", nullptr);
        CHECK_FALSE(tiling_from_environment(c));
        CHECK(c.tiled_from == 16);
    }
    {
        test::ScopedEnv off("MEDUSA_TILED_MATMUL", "off");
        CHECK(tiling_from_environment(c));
        CHECK(c.tiled_from == 0);
    }
    {
        test::ScopedEnv from("MEDUSA_TILED_MATMUL", "9:128x64");
        CHECK(tiling_from_environment(c));
        CHECK(c.tiled_from == 9);
        CHECK(c.tile == MatmulTile{128, 64, 8, 8});
    }
    {
        test::ScopedEnv from("MEDUSA_TILED_MATMUL", "32");
        CHECK(tiling_from_environment(c));
        CHECK(c.tiled_from == 32);
        CHECK(c.tile == MatmulTile{128, 64, 8, 8});  // the shape it had
    }
    {
        test::ScopedEnv from("MEDUSA_TILED_MATMUL", "16:coop64x64");
        CHECK(tiling_from_environment(c));
        CHECK(c.tiled_from == 16);
        CHECK(c.tile.kernel == TileKernel::MatrixUnits);
        CHECK(c.tile.workgroup() == 128);
    }
    for (const char* bad : {"0", "129", "-4", "16x", "16:64x33", "on", ":64x32", "16:", "16:coop64x32"}) {
        CAPTURE(bad);
        test::ScopedEnv env("MEDUSA_TILED_MATMUL", bad);
        CHECK_THROWS_WITH(tiling_from_environment(c), Catch::Contains(std::string("MEDUSA_TILED_MATMUL='") + bad + "'") &&
                                                          Catch::Contains("64x32"));
    }
}

TEST_CASE("MEDUSA_MATMUL_QUADS sets the subgroup layout's step, and a value it cannot read is one error naming it",
          "[kernel-tuning]") {
    MatmulConfig c{false, 64, 2};
    {
        test::ScopedEnv unset("MEDUSA_MATMUL_QUADS", nullptr);
        CHECK_FALSE(quads_from_environment(c));
        CHECK_FALSE(c.quads);
    }
    {
        test::ScopedEnv on("MEDUSA_MATMUL_QUADS", "on");
        CHECK(quads_from_environment(c));
        CHECK(c.quads);
        CHECK(c.name() == "storage/64/r2/quads");
    }
    {
        test::ScopedEnv off("MEDUSA_MATMUL_QUADS", "off");
        CHECK(quads_from_environment(c));
        CHECK_FALSE(c.quads);
    }
    for (const char* bad : {"1", "yes", "ON"}) {
        test::ScopedEnv env("MEDUSA_MATMUL_QUADS", bad);
        CHECK_THROWS_WITH(quads_from_environment(c), std::string("MEDUSA_MATMUL_QUADS='") + bad + "' must be on or off");
    }
}

TEST_CASE("the matrix units' tile runs only where the device offers them and its shared memory holds it",
          "[kernel-tuning][tiled]") {
    const std::optional<MatmulTile> coop = matmul_tile_named("coop64x64");
    REQUIRE(coop);
    CHECK(coop->kernel == TileKernel::MatrixUnits);
    CHECK(coop->rows == 64);
    CHECK(coop->tokens == 64);
    CHECK(matmul_tile_problem(*coop, {32, 1024, 49152, true}) == "");
    CHECK_THAT(matmul_tile_problem(*coop, {32, 1024, 49152, false, true}), Catch::Contains("matrix units"));
    // Their emulation asks for f16 arithmetic only, and the same shared memory.
    const std::optional<MatmulTile> emulated = matmul_tile_named("coop64x64-emulated");
    REQUIRE(emulated);
    CHECK(emulated->kernel == TileKernel::EmulatedMatrixUnits);
    CHECK(emulated->shared_bytes() == coop->shared_bytes());
    CHECK(matmul_tile_problem(*emulated, {8, 1024, 32768, false, true}) == "");
    CHECK_THAT(matmul_tile_problem(*emulated, {8, 1024, 32768, false, false}), Catch::Contains("f16 arithmetic"));
    // f16 chunks of 64 + 64 rows of 40, f32 sums in 64 rows of 68, a float per token.
    CHECK(coop->shared_bytes() == 128 * 40 * 2 + 64 * 68 * 4 + 64 * 4);
    CHECK_THAT(matmul_tile_problem(*coop, {32, 1024, 16384, true}), Catch::Contains("27904 bytes of shared memory"));
    // The tiled kernel's shapes need no matrix units.
    CHECK(matmul_tile_problem(MatmulTile{}, {32, 1024, 16384, false}) == "");
}

TEST_CASE("attention splits a short block's keys to fill the device, within the partials' room", "[kernel-tuning]") {
    CHECK(attention_splits(32, 1, 2048, 64) == 4);    // a decoded token of 32 heads: 128 workgroups
    CHECK(attention_splits(8, 1, 8192, 128) == 16);   // at most 16 ranges
    CHECK(attention_splits(8, 1, 1024, 128) == 4);    // each at least 256 slots of the context
    CHECK(attention_splits(32, 8, 2048, 64) == 1);    // a block of 8 fills it alone
    CHECK(attention_splits(8, 1, 256, 64) == 1);
    CHECK(attention_splits(8, 1, 256, 64, 7) == 3);   // asked for 7: 3 sets of 66 partials fit a row of 256
    CHECK(attention_splits(8, 1, 100, 128, 4) == 1);  // none fits: one range, written directly
    {
        test::ScopedEnv unset("MEDUSA_ATTENTION_SPLITS", nullptr);
        CHECK(attention_splits_from_environment() == std::nullopt);
    }
    {
        test::ScopedEnv five("MEDUSA_ATTENTION_SPLITS", "5");
        CHECK(attention_splits_from_environment() == 5u);
    }
    for (const char* bad : {"0", "65", "-2", "4x", "many"}) {
        CAPTURE(bad);
        test::ScopedEnv env("MEDUSA_ATTENTION_SPLITS", bad);
        CHECK_THROWS_WITH(attention_splits_from_environment(),
                          Catch::Contains(std::string("MEDUSA_ATTENTION_SPLITS='") + bad + "'"));
    }
}

TEST_CASE("the tuner's candidates fit the device and include the default", "[kernel-tuning]") {
    auto& ctx = gpu_context();
    for (bool cpu_layouts : {false, true}) {
        CAPTURE(cpu_layouts);
        const auto candidates = matmul_candidates(ctx, cpu_layouts);
        REQUIRE(!candidates.empty());
        for (const MatmulConfig& c : candidates) {
            CHECK(c.workgroup % ctx.info().subgroup_size == 0);
            CHECK(matmul_config_problem(c, matmul_limits(ctx)).empty());
            CHECK((c.rows == 1 || !cpu_layouts));  // the lane-per-row layout has one row per lane
            CHECK((!c.quads || !cpu_layouts));     // nor a step of words
        }
        // The subgroup layout's lanes are timed reading words and quads.
        const auto quads = std::count_if(candidates.begin(), candidates.end(), [](const MatmulConfig& c) { return c.quads; });
        CHECK(size_t(quads) * 2 == (cpu_layouts ? 0 : candidates.size()));
        const MatmulConfig d = default_matmul_config(ctx, cpu_layouts);
        CHECK(std::find(candidates.begin(), candidates.end(), d) != candidates.end());
        CHECK(d.texel == cpu_layouts);
        CHECK(d.quads == !cpu_layouts);
    }
}

TEST_CASE("a model uses the tuned configuration for its device and shapes, with the same tokens", "[kernel-tuning]") {
    test::ValidationGuard guard;
    test::TempDir dir("medusa-kernel-tuning-model");
    test::ScopedCacheDir cache(dir.path.string());
    ModelFile file = load_model(model_path("stories260K.bin"));
    auto& ctx = gpu_context();
    // A configuration the default never is: the other read path, the largest workgroup.
    const MatmulConfig def = default_matmul_config(ctx, ctx.info().kind == gpu::DeviceKind::Cpu);
    const MatmulConfig tuned{!def.texel, 256};
    {
        GpuModel untuned(ctx, file);
        CHECK(untuned.matmul_config_source() == "default");
        CHECK(untuned.matmuls().config() == def);
    }
    save_tuned_matmul(kernel_tuning_path(), tuning_device_key(ctx), tuning_model_key(file), tuned,
                      ctx.info().subgroup_size, {});
    GpuModel model(ctx, file);
    CHECK(model.matmul_config_source() == "tuned");
    CHECK(model.matmuls().config() == tuned);
    // Another model's shapes have no entry.
    ModelFile other_file = load_model(model_path("llama2xs.bin"));
    GpuModel other(ctx, other_file);
    CHECK(other.matmul_config_source() == "default");
    CpuReferenceModel cpu(file);
    const std::vector<int> prompt = {1, 403, 407, 261, 378};
    CHECK(test::greedy_ar(model, prompt, 60) == test::greedy_ar(cpu, prompt, 60));
}

TEST_CASE("bench --tune-kernels times every candidate and keeps the fastest", "[kernel-tuning][cli]") {
    test::TempDir dir("medusa-tune-kernels");
    const std::string path = (dir.path / "kernel-tuning.json").string(), report = (dir.path / "report.json").string();
    const auto r = test::run_medusa("bench --tune-kernels -m " + model_path("stories260K.bin") +
                                    " --tokens 2 --runs 1 --max-block 2 --tune-out " + path + " --json " + report);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const nlohmann::json j = nlohmann::json::parse(test::slurp(report));
    const auto candidates = matmul_candidates(gpu_context(), kernels::prefers_cpu_layouts(gpu_context()));
    REQUIRE(j["configs"].size() == candidates.size());
    // The kept configuration is the fastest decoder (or within 2% of it with a faster block).
    double fastest = 1e30;
    for (const auto& c : j["configs"]) fastest = std::min(fastest, c["decode_ms_per_token"].get<double>());
    const auto kept = std::find_if(j["configs"].begin(), j["configs"].end(),
                                   [&](const nlohmann::json& c) { return c["config"] == j["best"]; });
    REQUIRE(kept != j["configs"].end());
    CHECK((*kept)["decode_ms_per_token"].get<double>() <= fastest * 1.02);
    CHECK(r.out.find(j["best"].get<std::string>() + " ") != std::string::npos);
    CHECK(r.out.find("<- kept") != std::string::npos);
    const ModelFile file = load_model(model_path("stories260K.bin"));
    const auto saved =
        load_tuned_matmul(path, j["device"].get<std::string>(), tuning_model_key(file), matmul_limits(gpu_context()));
    REQUIRE(saved);
    CHECK(saved->name() == j["best"].get<std::string>());
    CHECK(j["device"] == tuning_device_key(gpu_context()));
}

TEST_CASE("generate ignores a tuned workgroup the device cannot run and prints the untuned text", "[kernel-tuning][cli]") {
    auto& ctx = gpu_context();
    const uint32_t sub = ctx.info().subgroup_size;
    for (const char* model : {"stories260K.bin", "gguf/llama2xs-q4_0.gguf"}) {
        CAPTURE(model);
        test::TempDir dir("medusa-kernel-tuning-generate");
        const std::string path = (dir.path / "kernel-tuning.json").string();
        const std::string env = "MEDUSA_CACHE=" + dir.path.string();
        const std::string args = "generate -m " + model_path(model) + " -p 'Once upon a time' -n 60 --temp 0";
        const auto untuned = test::run_medusa(args, env);
        REQUIRE(untuned.exit_code == 0);
        REQUIRE(untuned.err.find("warning") == std::string::npos);
        // Every workgroup below the subgroup size (1, 2 and 4 on lavapipe's 8 lanes), and a valid-looking
        // one tuned under twice the device's subgroup size.
        std::vector<std::pair<nlohmann::json, std::string>> entries;
        for (uint32_t wg = 1; wg < sub; wg *= 2)
            entries.push_back({{{"texel", true}, {"workgroup", wg}}, "workgroup " + std::to_string(wg) + " is not"});
        entries.push_back({{{"texel", true}, {"workgroup", 2 * sub}, {"subgroup", 2 * sub}},
                           "tuned for subgroups of " + std::to_string(2 * sub) + " lanes"});
        for (const auto& [entry, why] : entries) {
            CAPTURE(entry.dump());
            nlohmann::json file;
            file[tuning_device_key(ctx)][tuning_model_key(load_model(model_path(model)))] = entry;
            write_text(path, file.dump());
            const auto r = test::run_medusa(args, env);
            INFO(r.err);
            CHECK(r.exit_code == 0);
            CHECK(r.out == untuned.out);
            const size_t at = r.err.find("warning: ");
            REQUIRE(at != std::string::npos);
            CHECK(r.err.find("warning: ", at + 1) == std::string::npos);  // one line
            const std::string line = r.err.substr(at, r.err.find('\n', at) - at);
            CHECK_THAT(line, Catch::Contains(path) && Catch::Contains(why) && Catch::Contains("ignored"));
        }
    }
}
