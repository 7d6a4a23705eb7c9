// The kernel tuner's cache: what `bench --tune-kernels` keeps is what a model opened later on the
// same device uses, other entries survive a save, and a damaged file is an error naming it.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>

#include "cli_runner.h"
#include "greedy_reference.h"
#include "gpu_fixture.h"
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

// MEDUSA_CACHE pointed at a folder for the scope, then put back.
struct CacheDir {
    std::string old;
    bool had = false;
    explicit CacheDir(const std::string& dir) {
        if (const char* c = std::getenv("MEDUSA_CACHE")) old = c, had = true;
        setenv("MEDUSA_CACHE", dir.c_str(), 1);
    }
    ~CacheDir() {
        if (had) setenv("MEDUSA_CACHE", old.c_str(), 1);
        else unsetenv("MEDUSA_CACHE");
    }
};

}  // namespace

TEST_CASE("a saved kernel configuration is loaded back and other entries are kept", "[kernel-tuning]") {
    test::TempDir dir("medusa-kernel-tuning");
    const std::string path = (dir.path / "sub" / "kernel-tuning.json").string();
    CHECK_FALSE(load_tuned_matmul(path, "dev", "q8_0 64x172x5 v512"));  // no file yet
    save_tuned_matmul(path, "dev", "q8_0 64x172x5 v512", {true, 128}, {{"decode_ms_per_token", 1.5}});
    save_tuned_matmul(path, "dev", "f32 64x172x5 v512", {false, 32}, {});
    save_tuned_matmul(path, "other dev", "q8_0 64x172x5 v512", {false, 256, 4}, {});
    CHECK(load_tuned_matmul(path, "dev", "q8_0 64x172x5 v512") == MatmulConfig{true, 128});
    CHECK(load_tuned_matmul(path, "dev", "f32 64x172x5 v512") == MatmulConfig{false, 32});
    CHECK(load_tuned_matmul(path, "other dev", "q8_0 64x172x5 v512") == MatmulConfig{false, 256, 4});
    CHECK_FALSE(load_tuned_matmul(path, "dev", "q4_0 64x172x5 v512"));
    save_tuned_matmul(path, "dev", "q8_0 64x172x5 v512", {false, 64}, {});  // replaced
    CHECK(load_tuned_matmul(path, "dev", "q8_0 64x172x5 v512") == MatmulConfig{false, 64});
    CHECK(load_tuned_matmul(path, "dev", "f32 64x172x5 v512") == MatmulConfig{false, 32});
}

TEST_CASE("a damaged kernel tuning file is an error naming it", "[kernel-tuning]") {
    test::TempDir dir("medusa-kernel-tuning-bad");
    const auto path = dir.path / "kernel-tuning.json";
    const std::pair<const char*, const char*> cases[] = {
        {"{\"dev\": {\"m\": {\"texel\": true", "malformed JSON"},
        {"[1, 2]", "must be a JSON object"},
        {"{\"dev\": {\"m\": {\"texel\": 1, \"workgroup\": 64}}}", "needs \"texel\""},
        {"{\"dev\": {\"m\": {\"texel\": true}}}", "needs \"texel\""},
        {"{\"dev\": {\"m\": {\"texel\": true, \"workgroup\": 96}}}", "not a power of two"},
        {"{\"dev\": {\"m\": {\"texel\": true, \"workgroup\": 4096}}}", "not a power of two"},
        {"{\"dev\": {\"m\": {\"texel\": true, \"workgroup\": -64}}}", "needs \"texel\""},
        {"{\"dev\": {\"m\": {\"texel\": true, \"workgroup\": 64, \"rows\": 0}}}", "rows must be a count from 1 to 4"},
        {"{\"dev\": {\"m\": {\"texel\": true, \"workgroup\": 64, \"rows\": 8}}}", "rows must be a count from 1 to 4"},
        {"{\"dev\": {\"m\": {\"texel\": true, \"workgroup\": 64, \"rows\": \"2\"}}}", "rows must be a count from 1 to 4"},
    };
    for (const auto& [text, why] : cases) {
        CAPTURE(text);
        write_text(path, text);
        try {
            load_tuned_matmul(path.string(), "dev", "m");
            FAIL("no error");
        } catch (const FormatError& e) {
            CHECK_THAT(e.what(), Catch::Contains(path.string()) && Catch::Contains(why));
        }
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
            CHECK((c.rows == 1 || !cpu_layouts));  // the lane-per-row layout has one row per lane
        }
        const MatmulConfig d = default_matmul_config(ctx, cpu_layouts);
        CHECK(std::find(candidates.begin(), candidates.end(), d) != candidates.end());
        CHECK(d.texel == cpu_layouts);
    }
}

TEST_CASE("a model uses the tuned configuration for its device and shapes, with the same tokens", "[kernel-tuning]") {
    test::ValidationGuard guard;
    test::TempDir dir("medusa-kernel-tuning-model");
    CacheDir cache(dir.path.string());
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
    save_tuned_matmul(kernel_tuning_path(), tuning_device_key(ctx), tuning_model_key(file), tuned, {});
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
    const auto saved = load_tuned_matmul(path, j["device"].get<std::string>(), tuning_model_key(file));
    REQUIRE(saved);
    CHECK(saved->name() == j["best"].get<std::string>());
    CHECK(j["device"] == tuning_device_key(gpu_context()));
}
