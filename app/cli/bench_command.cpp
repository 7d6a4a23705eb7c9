// `medusa bench`: prefill and decode speed of the GPU engine and of the CPU reference,
// measured side by side in one run on the same prompt, reported as a table and as JSON.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "bench_charts.h"
#include "bench_compare.h"
#include "bench_dtypes.h"
#include "bench_kernels.h"
#include "bench_prompt.h"
#include "prompts_file.h"
#include "commands.h"
#include "context_size.h"
#include "gpu/bandwidth_probe.h"
#include "gpu/submit_probe.h"
#include "llm/cpu_reference.h"
#include "model/atomic_file.h"
#include "llm/gpu_model.h"
#include "session.h"
#include "model/json_file.h"

namespace medusa::cli {

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

double ms(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

struct Timing {
    double prefill_tokens_per_s = 0;
    double decode_tokens_per_s = 0;
    double decode_ms_per_token = 0;
    int decode_tokens = 0;
    int runs = 0;
};

// One prompt and one decoded token, not timed: their command buffers are recorded and their
// pipelines built here, so that the first timed run measures what the others do.
void warm_up(LanguageModel& model, const std::vector<int>& prompt) {
    model.forward(TokenBlock::causal(0, prompt));
    if (int(prompt.size()) < model.config().seq_len)
        model.forward(TokenBlock::causal(int(prompt.size()), {model.argmax(int(prompt.size()) - 1)}));
}

// Prefill `prompt`, then decode greedily `n` tokens, `runs` times; medians of the rates.
Timing time_engine(LanguageModel& model, const std::vector<int>& prompt, int n, int runs, const char* label) {
    std::vector<double> prefill, decode;
    n = std::min(n, model.config().seq_len - int(prompt.size()));
    for (int r = 0; r < runs; ++r) {
        auto t0 = Clock::now();
        model.forward(TokenBlock::causal(0, prompt));
        int token = model.argmax(int(prompt.size()) - 1);
        auto t1 = Clock::now();
        for (int i = 0; i < n; ++i) {
            model.forward(TokenBlock::causal(int(prompt.size()) + i, {token}));
            token = model.argmax(0);
        }
        auto t2 = Clock::now();
        prefill.push_back(prompt.size() * 1000.0 / ms(t0, t1));
        decode.push_back(n * 1000.0 / ms(t1, t2));
        std::fprintf(stderr, "\r%s: run %d/%d: prefill %.0f tokens/s, decode %.1f tokens/s   ", label, r + 1, runs,
                     prefill.back(), decode.back());
    }
    std::fprintf(stderr, "\n");
    Timing t;
    t.prefill_tokens_per_s = median(prefill);
    t.decode_tokens_per_s = median(decode);
    t.decode_ms_per_token = t.decode_tokens_per_s > 0 ? 1000.0 / t.decode_tokens_per_s : 0;
    t.decode_tokens = n;
    t.runs = runs;
    return t;
}

json timing_json(const Timing& t) {
    return {{"prefill_tokens_per_s", t.prefill_tokens_per_s},
            {"decode_tokens_per_s", t.decode_tokens_per_s},
            {"decode_ms_per_token", t.decode_ms_per_token},
            {"decode_tokens_per_run", t.decode_tokens},
            {"runs", t.runs}};
}

// What one bench run times, from its flags.
struct BenchPlan {
    int runs = 0, n_decode = 0, n_prompt = 0;
    std::vector<int> prompt;
    std::string layouts_name;  // --kernel-layouts as given
    KernelLayouts layouts = KernelLayouts::Auto;
    bool big = false;          // a model of 1024 dimensions or more
    int context = 0, position = 0;
};

// Which shader layouts to time: the device's own choice, or the other one for comparison.
KernelLayouts parse_layouts(const std::string& name) {
    if (name != "auto" && name != "gpu" && name != "cpu")
        throw UsageError("--kernel-layouts must be auto, gpu or cpu, got '" + name + "'");
    return name == "gpu" ? KernelLayouts::Gpu : name == "cpu" ? KernelLayouts::Cpu : KernelLayouts::Auto;
}

// The run's sizes; the layouts and the verify position are checked once the GPU is open.
BenchPlan plan_runs(const Args& args, const LlamaConfig& c) {
    BenchPlan p;
    p.runs = std::max(1, args.integer("--runs", 5));
    p.n_decode = std::max(1, args.integer("--tokens", 128));
    p.n_prompt = std::clamp(args.integer("--prompt-tokens", kBenchPromptTokens), 1, TokenBlock::kMaxTokens);
    p.prompt = bench_prompt(c.vocab_size, p.n_prompt);
    return p;
}

void plan_placement(BenchPlan& p, const Args& args, const ModelFile& file) {
    p.layouts_name = args.str("--kernel-layouts", "auto");
    p.layouts = parse_layouts(p.layouts_name);
    p.big = file.config.dim >= 1024;
    // Synthetic 7B shapes would need gigabytes of cache for their full context: 1024 positions.
    p.context = context_size(args, file, file.format == ModelFormat::Synthetic ? 1024 : 0);
    // Where the timed verify blocks sit in the cache: after the prompt, or deeper (--position),
    // where attention over the cached keys costs more.
    p.position = args.integer("--position", p.n_prompt);
    if (p.position < 1 || p.position + 1 >= p.context)
        throw UsageError("--position must be 1.." + std::to_string(p.context - 2) + " (the context), got " +
                         std::to_string(p.position));
}

// The report's description of the model, the device and the run.
json bench_header(const ModelFile& file, gpu::Context& gpu, const BenchPlan& p) {
    const LlamaConfig& c = file.config;
    json out;
    out["model"] = file.path;
    out["synthetic"] = file.format == ModelFormat::Synthetic;
    out["config"] = {{"dim", c.dim}, {"hidden_dim", c.hidden_dim}, {"n_layers", c.n_layers}, {"n_heads", c.n_heads},
                     {"n_kv_heads", c.n_kv_heads}, {"vocab_size", c.vocab_size}, {"context", c.seq_len}};
    out["ctx_size"] = p.context;
    out["device"] = {{"name", gpu.info().name}, {"vendor", gpu.info().vendor}, {"driver", gpu.info().driver},
                     {"type", gpu::device_kind_name(gpu.info().kind)}};
    out["prompt_tokens"] = p.n_prompt;
    out["kernel_layouts"] = p.layouts_name;
    return out;
}

// The GPU engine's speed, costs per token and verify latencies; the decoding modes side by side go
// into out["compare"].
json time_vulkan(const Args& args, const std::unique_ptr<gpu::Context>& gpu, const ModelFile& file, const BenchPlan& p,
                 const gpu::MeasuredBandwidth& bandwidth, json& out) {
    std::fprintf(stderr, "uploading weights to %s...\n", gpu->info().name.c_str());
    GpuModel model(*gpu, file, {.context = p.context, .layouts = p.layouts});
    warm_up(model, p.prompt);
    const uint64_t submits_before = model.submits();
    Timing t = time_engine(model, p.prompt, p.n_decode, p.runs, "vulkan");
    const double forwards = double(model.submits() - submits_before);
    json g = timing_json(t);
    g["dispatches_per_token"] = model.dispatches_per_forward();
    g["barriers_per_token"] = model.barriers_per_forward();
    g["submits_per_token"] = forwards / (p.runs * (t.decode_tokens + 1.0));
    g["weight_bytes"] = model.weight_bytes();
    g["weight_bandwidth_gb_s"] = model.weight_bytes() / (t.decode_ms_per_token * 1e-3) / 1e9;
    g["measured_bandwidth"] = {{"gb_s", bandwidth.gb_s}, {"method", bandwidth.method}, {"bytes", bandwidth.bytes}};
    g["decode_bandwidth_fraction"] = g["weight_bandwidth_gb_s"].get<double>() / bandwidth.gb_s;
    // What each extra submit of a step (a draft model's or EAGLE's levels) costs by itself.
    g["empty_submit_ms"] = gpu::measure_submit_ms(*gpu);
    // The same with a blocking wait from the start: what polling the fence first saves.
    g["empty_submit_blocking_ms"] = gpu::measure_submit_ms(*gpu, 200, std::chrono::microseconds(0));
    g["weights"] = model.weight_variants();
    g["matmul_config"] = {{"name", model.matmuls().config().name()}, {"source", model.matmul_config_source()}};
    // Block sizes up to 128 tokens (64 for a 1B model on a CPU driver: its 128-token block takes a minute).
    const int max_block = args.integer("--max-block", p.big && gpu->info().kind == gpu::DeviceKind::Cpu ? 64 : 128);
    g["verify_position"] = p.position;
    g["verify_latency_ms"] = bench_verify_latency(model, p.position, p.runs, max_block);
    g["forward_ratio"] = forward_ratios(g["verify_latency_ms"]);
    // Decoding modes side by side: --compare's list, else plain against Medusa.
    if (args.has("--compare") || args.has("--prompts") || (!args.has("--no-medusa") && file.format != ModelFormat::Synthetic))
        out["compare"] = bench_compare(args, model, file, p.prompt, p.n_decode, p.runs);
    return g;
}

// Each decode stage's GPU time over eight tokens, from timestamps, and the device's peak memory.
void profile_stages(gpu::Context& gpu, const ModelFile& file, const BenchPlan& p, json& g) {
    GpuModel profiled(gpu, file, {.timestamps = true, .context = p.context, .layouts = p.layouts});
    profiled.forward(TokenBlock::causal(0, p.prompt));
    int token = profiled.argmax(p.n_prompt - 1);
    for (int i = 0; i < 8; ++i) {
        profiled.forward(TokenBlock::causal(p.n_prompt + i, {token}));
        token = profiled.argmax(0);
    }
    json stages = json::object();
    double gpu_ms = 0;
    for (const auto& s : profiled.stage_times()) {
        stages[s.stage] = {{"ms", s.ms}, {"dispatches", s.dispatches}};
        gpu_ms += s.ms;
    }
    g["decode_stage_gpu_ms"] = stages;
    // Beside decode_ms_per_token: the rest of a token's time is the submit, the wait and the host.
    if (!stages.empty()) g["decode_gpu_ms_per_token"] = gpu_ms;
    g["peak_gpu_memory_bytes"] = gpu.peak_bytes();
}

// The CPU reference's speed (a few tokens, once, for a large model) and the GPU's speed-up over it.
void time_cpu_reference(const ModelFile& file, const BenchPlan& p, json& out) {
    std::fprintf(stderr, "preparing the CPU reference...\n");
    CpuReferenceModel cpu(file, p.context);
    Timing t = time_engine(cpu, p.prompt, p.big ? std::min(p.n_decode, 4) : p.n_decode, p.big ? 1 : p.runs,
                           "cpu-reference");
    out["cpu_reference"] = timing_json(t);
    out["decode_speedup_vulkan_over_cpu_reference"] =
        t.decode_tokens_per_s > 0 ? out["vulkan"]["decode_tokens_per_s"].get<double>() / t.decode_tokens_per_s : 0.0;
}

// The table on stdout.
void print_bench(const json& out, const gpu::MeasuredBandwidth& bandwidth) {
    const json& g = out["vulkan"];
    std::printf("%-15s %14s %14s %12s\n", "engine", "prefill tok/s", "decode tok/s", "ms/token");
    auto row = [](const char* name, const json& j) {
        std::printf("%-15s %14.1f %14.1f %12.3f\n", name, j["prefill_tokens_per_s"].get<double>(),
                    j["decode_tokens_per_s"].get<double>(), j["decode_ms_per_token"].get<double>());
    };
    row("vulkan", g);
    if (out.contains("cpu_reference")) row("cpu-reference", out["cpu_reference"]);
    std::printf("dispatches/token %u, barriers/token %u, submits/token %.2f, weights %.1f MiB, decode weight "
                "bandwidth %.2f GB/s\n",
                g["dispatches_per_token"].get<uint32_t>(), g["barriers_per_token"].get<uint32_t>(),
                g["submits_per_token"].get<double>(),
                g["weight_bytes"].get<double>() / (1 << 20), g["weight_bandwidth_gb_s"].get<double>());
    std::printf("measured bandwidth %.2f GB/s (%s): decode streams %.0f%% of it\n", bandwidth.gb_s,
                bandwidth.method.c_str(), 100.0 * g["decode_bandwidth_fraction"].get<double>());
    std::printf("an empty submit + wait: %.3f ms (%.3f ms with a blocking wait); matmul configuration %s (%s)\n",
                g["empty_submit_ms"].get<double>(), g["empty_submit_blocking_ms"].get<double>(),
                g["matmul_config"]["name"].get<std::string>().c_str(),
                g["matmul_config"]["source"].get<std::string>().c_str());
    if (g.contains("decode_gpu_ms_per_token")) {
        std::printf("decode GPU time a token, timed apart with timestamps: %.3f ms (%.3f ms a token above);",
                    g["decode_gpu_ms_per_token"].get<double>(), g["decode_ms_per_token"].get<double>());
        std::vector<std::pair<double, std::string>> stages;
        for (const auto& [name, st] : g["decode_stage_gpu_ms"].items()) stages.emplace_back(st["ms"].get<double>(), name);
        std::sort(stages.rbegin(), stages.rend());
        for (const auto& [ms, name] : stages) std::printf(" %s %.3f", name.c_str(), ms);
        std::printf("\n");
    }
    std::printf("forward(T)/forward(1):");
    for (const json& row : g["verify_latency_ms"]) {
        const std::string tokens = std::to_string(row["tokens"].get<int>());
        std::printf("  %s: %.2f", tokens.c_str(), g["forward_ratio"][tokens].get<double>());
    }
    std::printf("\n");
}

}  // namespace

int run_bench(int argc, char** argv) {
    Args args(argc, argv, 2, flags_of("bench"));
    check_output_flags(args, {"--json", "--plot", "--tune-out"});
    if (args.has("--prompts")) read_prompts_file(args.str("--prompts"));  // a bad file fails before any work
    if (args.has("--tune-kernels")) return run_kernel_tuning(args);
    if (wants_dtype_comparison(args)) return run_bench_dtypes(args);
    ModelFile file = open_model(args);
    BenchPlan plan = plan_runs(args, file.config);
    auto gpu = open_gpu(args, &file);
    plan_placement(plan, args, file);
    json out = bench_header(file, *gpu, plan);

    std::fprintf(stderr, "measuring the memory bandwidth of %s...\n", gpu->info().name.c_str());
    const gpu::MeasuredBandwidth bandwidth = gpu::measure_bandwidth(*gpu);
    json g = time_vulkan(args, gpu, file, plan, bandwidth, out);
    profile_stages(*gpu, file, plan, g);
    out["vulkan"] = g;
    if (!args.has("--no-cpu")) time_cpu_reference(file, plan, out);
    if (gpu->validation_messages() > 0) out["validation_messages"] = gpu->validation_messages();

    print_bench(out, bandwidth);
    if (args.has("--json")) {
        write_file_atomically(args.str("--json"), json_text(out));
        std::fprintf(stderr, "wrote %s\n", args.str("--json").c_str());
    }
    if (args.has("--plot"))
        write_plot(charts::bench_charts(out), file.path + " on " + gpu->info().name, args.str("--plot"));
    return gpu->validation_messages() > 0 ? 3 : 0;
}

}  // namespace medusa::cli
