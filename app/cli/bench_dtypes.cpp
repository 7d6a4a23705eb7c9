// `medusa bench --synthetic NAME --dtype A,B,...`: one synthetic model in several weight types,
// decoded one after the other in the same run, so their speeds and weight bandwidths sit side by
// side, each against q4_0's bandwidth when q4_0 is in the list.
#include "bench_dtypes.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench_prompt.h"
#include "context_size.h"
#include "gpu/bandwidth_probe.h"
#include "llm/gpu_model.h"
#include "model/atomic_file.h"
#include "model/synthetic_model.h"
#include "session.h"
#include "model/json_file.h"

namespace medusa::cli {

namespace {

struct DtypeTiming {
    std::string dtype;
    size_t weight_bytes = 0;
    double ms_per_token = 0;  // best of the runs
    std::string weights;      // the shader variants the model runs
};

DtypeTiming time_dtype(const Args& args, gpu::Context& gpu, const std::string& synthetic, const std::string& dtype,
                       int tokens, int runs) {
    const ModelFile file = make_synthetic_model(synthetic, parse_dtype(dtype));
    GpuModel model(gpu, file, {.context = context_size(args, file, 1024)});
    DtypeTiming t{dtype, model.weight_bytes(), 1e30,
                  model.weight_variants() + "; matmul " + model.matmuls().config().name() + " (" +
                      model.matmul_config_source() + ")"};
    // After the same prompt as bench -m: attention at the same cache depth.
    const std::vector<int> prompt = bench_prompt(file.config.vocab_size);
    const int start_position = int(prompt.size());
    for (int r = 0; r < runs; ++r) {
        model.forward(TokenBlock::causal(0, prompt));
        int token = model.argmax(start_position - 1);
        model.forward(TokenBlock::causal(start_position, {token}));  // warms the single-token command buffers
        token = model.argmax(0);
        const auto start = std::chrono::steady_clock::now();
        for (int i = 1; i <= tokens; ++i) {
            model.forward(TokenBlock::causal(start_position + i, {token}));
            token = model.argmax(0);
        }
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        t.ms_per_token = std::min(t.ms_per_token, ms / tokens);
        std::fprintf(stderr, "%s: run %d/%d: %.1f ms/token\n", dtype.c_str(), r + 1, runs, ms / tokens);
    }
    return t;
}

}  // namespace

bool wants_dtype_comparison(const Args& args) {
    return args.has("--synthetic") && args.str("--dtype").find(',') != std::string::npos;
}

int run_bench_dtypes(const Args& args) {
    std::vector<std::string> dtypes;
    std::stringstream list(args.str("--dtype"));
    for (std::string d; std::getline(list, d, ',');)
        if (!d.empty()) dtypes.push_back(d);
    for (const std::string& d : dtypes) parse_dtype(d);  // a usage error before minutes of work
    const std::string synthetic = args.str("--synthetic");
    const int tokens = std::max(1, args.integer("--tokens", 8));
    const int runs = std::max(1, args.integer("--runs", 1));
    auto gpu = open_gpu(args);
    const gpu::MeasuredBandwidth bandwidth = gpu::measure_bandwidth(*gpu);

    std::vector<DtypeTiming> rows;
    for (const std::string& d : dtypes) rows.push_back(time_dtype(args, *gpu, synthetic, d, tokens, runs));

    double q4_0_gb_s = 0;
    auto gb_s = [](const DtypeTiming& t) { return double(t.weight_bytes) / (t.ms_per_token * 1e-3) / 1e9; };
    for (const auto& t : rows)
        if (t.dtype == "q4_0") q4_0_gb_s = gb_s(t);
    nlohmann::json out = {{"model", "synthetic:" + synthetic},
                          {"device", {{"name", gpu->info().name}, {"type", gpu::device_kind_name(gpu->info().kind)}}},
                          {"decode_tokens_per_run", tokens},
                          {"runs", runs},
                          {"measured_bandwidth", {{"gb_s", bandwidth.gb_s}, {"method", bandwidth.method}}},
                          {"dtypes", nlohmann::json::array()}};
    std::printf("measured bandwidth %.2f GB/s (%s)\n", bandwidth.gb_s, bandwidth.method.c_str());
    std::printf("%-8s %12s %14s %10s %10s %10s %12s\n", "dtype", "weights MiB", "decode tok/s", "ms/token", "GB/s",
                "of meas.", "x q4_0 GB/s");
    for (const auto& t : rows) {
        const double ratio = q4_0_gb_s > 0 ? gb_s(t) / q4_0_gb_s : 0;
        std::printf("%-8s %12.1f %14.2f %10.1f %10.2f %9.0f%% %12s\n", t.dtype.c_str(),
                    double(t.weight_bytes) / (1 << 20), 1000.0 / t.ms_per_token, t.ms_per_token, gb_s(t),
                    100.0 * gb_s(t) / bandwidth.gb_s,
                    q4_0_gb_s > 0 ? std::to_string(ratio).substr(0, 4).c_str() : "-");
        out["dtypes"].push_back({{"dtype", t.dtype},
                                 {"weight_bytes", t.weight_bytes},
                                 {"weights", t.weights},
                                 {"decode_tokens_per_s", 1000.0 / t.ms_per_token},
                                 {"decode_ms_per_token", t.ms_per_token},
                                 {"weight_bandwidth_gb_s", gb_s(t)},
                                 {"decode_bandwidth_fraction", gb_s(t) / bandwidth.gb_s},
                                 {"bandwidth_vs_q4_0", ratio}});
    }
    if (args.has("--json")) {
        write_file_atomically(args.str("--json"), json_text(out));
    }
    return gpu->validation_messages() > 0 ? 3 : 0;
}

}  // namespace medusa::cli
