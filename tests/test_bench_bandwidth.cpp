// `bench` says what fraction of a bandwidth it measured itself decoding streams, and how a
// forward over T tokens compares with one over a single token.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "cli_runner.h"
#include "gpu/bandwidth_probe.h"
#include "gpu_fixture.h"
#include "test_paths.h"

using medusa::test::run_medusa;
using medusa::test::slurp;
using nlohmann::json;
namespace fs = std::filesystem;

TEST_CASE("both bandwidth probes copy and time something", "[bench]") {
    medusa::test::ValidationGuard guard;
    const auto host = medusa::gpu::measure_host_copy(size_t(8) << 20, 2);
    CHECK(std::isfinite(host.gb_s));
    CHECK(host.gb_s > 0.05);
    CHECK(host.method.find("host") != std::string::npos);
    CHECK(host.bytes == size_t(8) << 20);
    const auto device = medusa::gpu::measure_device_copy(medusa::test::gpu_context(), size_t(8) << 20, 2);
    CHECK(std::isfinite(device.gb_s));
    CHECK(device.gb_s > 0.05);
    CHECK(device.method.find("device") != std::string::npos);
}

TEST_CASE("bench JSON carries decode_bandwidth_fraction and forward_ratio for T = 1, 2, 4, 8", "[bench][cli]") {
    const fs::path path = fs::temp_directory_path() / ("medusa_bench_bw_" + std::to_string(getpid()) + ".json");
    const auto r = run_medusa("bench -m " + medusa::test::model_path("stories260K.bin") +
                              " --runs 1 --tokens 8 --max-block 8 --no-cpu --no-medusa --json " + path.string());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const json b = json::parse(slurp(path.string()));
    fs::remove(path);
    const json& g = b["vulkan"];
    const double measured = g["measured_bandwidth"]["gb_s"].get<double>();
    REQUIRE(measured > 0);
    CHECK(g["decode_bandwidth_fraction"].get<double>() ==
          Approx(g["weight_bandwidth_gb_s"].get<double>() / measured).epsilon(1e-9));
    const json& ratio = g["forward_ratio"];
    const json& latency = g["verify_latency_ms"];
    REQUIRE(latency.size() == 4);
    REQUIRE(ratio.size() == 4);
    CHECK(ratio["1"].get<double>() == 1.0);
    for (const json& row : latency) {
        const std::string t = std::to_string(row["tokens"].get<int>());
        CAPTURE(t);
        REQUIRE(ratio.contains(t));
        CHECK(ratio[t].get<double>() == Approx(row["ms"].get<double>() / latency[0]["ms"].get<double>()));
    }
    // Barriers only where data needs them: at least the one closing the forward, at most one a dispatch.
    const uint32_t dispatches = g["dispatches_per_token"].get<uint32_t>(), barriers = g["barriers_per_token"].get<uint32_t>();
    CHECK(barriers >= 1);
    CHECK(barriers <= dispatches);
    CHECK(r.out.find("barriers/token " + std::to_string(barriers)) != std::string::npos);
    CHECK(g["empty_submit_ms"].get<double>() > 0);
    CHECK(g["empty_submit_blocking_ms"].get<double>() > 0);
    CHECK(g["matmul_config"]["name"].get<std::string>().find('/') != std::string::npos);
    CHECK(r.out.find("matmul configuration " + g["matmul_config"]["name"].get<std::string>()) != std::string::npos);
    CHECK(r.out.find("forward(T)/forward(1):") != std::string::npos);
    CHECK(r.out.find("decode streams") != std::string::npos);
    // The GPU's share of a decoded token: the stages' sum, printed beside the timed figure.
    if (g.contains("decode_stage_gpu_ms") && !g["decode_stage_gpu_ms"].empty()) {
        double sum = 0;
        for (const auto& [name, st] : g["decode_stage_gpu_ms"].items()) sum += st["ms"].get<double>();
        CHECK(g["decode_gpu_ms_per_token"].get<double>() == Approx(sum));
        CHECK(g["decode_stage_gpu_ms"].contains("attention"));
        CHECK(r.out.find("decode GPU time a token") != std::string::npos);
    }
}

TEST_CASE("bench --position times the verify blocks that deep into the cache, within the context", "[bench][cli]") {
    const fs::path path = fs::temp_directory_path() / ("medusa_bench_pos_" + std::to_string(getpid()) + ".json");
    // stories260K's context is 512 positions: from 506, blocks of 1, 2 and 4 tokens fit and 8 does not.
    const auto r = run_medusa("bench -m " + medusa::test::model_path("stories260K.bin") +
                              " --runs 1 --tokens 2 --max-block 8 --no-cpu --no-medusa --position 506 --json " +
                              path.string());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const json g = json::parse(slurp(path.string()))["vulkan"];
    fs::remove(path);
    CHECK(g["verify_position"].get<int>() == 506);
    REQUIRE(g["verify_latency_ms"].size() == 3);
    CHECK(g["verify_latency_ms"][2]["tokens"].get<int>() == 4);
    CHECK(r.out.find("at cache position 506") != std::string::npos);

    const auto bad = run_medusa("bench -m " + medusa::test::model_path("stories260K.bin") + " --position 600");
    CHECK(bad.exit_code != 0);
    CHECK(bad.err.find("--position must be 1..510") != std::string::npos);
    CHECK(bad.err.find("600") != std::string::npos);
}
