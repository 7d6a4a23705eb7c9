#include "bench_kernels.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "context_size.h"
#include "llm/gpu_model.h"
#include "llm/kernel_tuning.h"
#include "model/atomic_file.h"
#include "session.h"
#include "model/json_file.h"

namespace medusa::cli {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

struct ConfigTiming {
    MatmulConfig config;
    double decode_ms = 1e30;  // per token, best of the runs
    double block_ms = 1e30;   // one forward over `block` tokens, best of the runs
};

std::vector<int> block_tokens(int n, int vocab) {
    std::vector<int> t;
    for (int i = 0; i < n; ++i) t.push_back((i * 7919 + 3) % vocab);
    return t;
}

// One round of timings for configuration `t.config`, keeping the best figures so far. The first
// forward of each size after a switch builds its pipelines and records the sequence: not timed.
void time_round(GpuModel& model, ConfigTiming& t, int tokens, int block) {
    model.set_matmul_config(t.config);
    const int vocab = model.config().vocab_size;
    model.forward(TokenBlock::causal(0, {1}));
    model.forward(TokenBlock::causal(1, block_tokens(block, vocab)));
    int token = 1;
    auto t0 = Clock::now();
    for (int i = 0; i < tokens; ++i) {
        model.forward(TokenBlock::causal(1 + i, {token}));
        token = model.argmax(0);
    }
    t.decode_ms = std::min(t.decode_ms, ms_since(t0) / tokens);
    t0 = Clock::now();
    model.forward(TokenBlock::causal(1, block_tokens(block, vocab)));
    t.block_ms = std::min(t.block_ms, ms_since(t0));
}

}  // namespace

int run_kernel_tuning(const Args& args) {
    ModelFile file = open_model(args);
    auto gpu = open_gpu(args, &file);
    const bool big = file.config.dim >= 1024;
    const int tokens = std::max(1, args.integer("--tokens", big ? 3 : 32));
    const int runs = std::max(1, args.integer("--runs", big ? 2 : 5));
    const int block = std::clamp(args.integer("--max-block", 8), 1, TokenBlock::kMaxTokens);
    const int context = context_size(args, file, file.format == "synthetic" ? 1024 : 0);
    GpuModel model(*gpu, file, {.context = context, .matmul = MatmulConfig{}});
    const std::string device_key = tuning_device_key(*gpu), model_key = tuning_model_key(file);
    const std::vector<MatmulConfig> candidates = matmul_candidates(*gpu, model.matmuls().cpu_layouts());
    std::fprintf(stderr, "tuning the matrix kernels for %s on %s: %zu configurations\n", model_key.c_str(),
                 gpu->info().name.c_str(), candidates.size());

    // Rounds over every configuration in turn, best of the rounds: a machine's drift over the
    // minutes of a run affects them all alike.
    std::vector<ConfigTiming> rows;
    for (const MatmulConfig& c : candidates) rows.push_back({c});
    for (int r = 0; r < runs; ++r)
        for (size_t i = 0; i < rows.size(); ++i) {
            time_round(model, rows[i], tokens, block);
            std::fprintf(stderr, "round %d/%d [%zu/%zu] %-12s decode %9.3f ms/token, forward(%d) %9.3f ms\n", r + 1,
                         runs, i + 1, rows.size(), rows[i].config.name().c_str(), rows[i].decode_ms, block,
                         rows[i].block_ms);
        }
    // Decoding is what runs most; a verify block decides between configurations within 2%.
    const auto best = std::min_element(rows.begin(), rows.end(), [](const ConfigTiming& a, const ConfigTiming& b) {
        if (std::abs(a.decode_ms - b.decode_ms) > 0.02 * std::min(a.decode_ms, b.decode_ms)) return a.decode_ms < b.decode_ms;
        return a.block_ms < b.block_ms;
    });
    const MatmulConfig fallback = default_matmul_config(*gpu, model.matmuls().cpu_layouts());
    const auto untuned = std::find_if(rows.begin(), rows.end(), [&](const ConfigTiming& t) { return t.config == fallback; });
    if (untuned == rows.end()) throw std::logic_error("the default matmul configuration is not a candidate");

    nlohmann::json table = nlohmann::json::array();
    std::printf("%-14s %16s %18s %14s\n", "matmul config", "decode ms/token", "forward(block) ms", "x best decode");
    for (const ConfigTiming& t : rows) {
        std::printf("%-14s %16.3f %18.3f %14.2f%s\n", t.config.name().c_str(), t.decode_ms, t.block_ms,
                    t.decode_ms / best->decode_ms, &t == &*best ? "  <- kept" : "");
        table.push_back({{"config", t.config.name()}, {"texel", t.config.texel}, {"workgroup", t.config.workgroup},
                         {"rows", t.config.rows},
                         {"decode_ms_per_token", t.decode_ms}, {"forward_block_ms", t.block_ms}});
    }
    std::printf("untuned default %s: decode %.3f ms/token, so the tuned one is %.2fx as fast\n",
                untuned->config.name().c_str(), untuned->decode_ms, untuned->decode_ms / best->decode_ms);
    const nlohmann::json details = {{"decode_ms_per_token", best->decode_ms}, {"forward_block_ms", best->block_ms},
                                    {"block_tokens", block}, {"default_decode_ms_per_token", untuned->decode_ms}};
    const std::string path = args.str("--tune-out", kernel_tuning_path());
    if (!path.empty()) {
        save_tuned_matmul(path, device_key, model_key, best->config, gpu->info().subgroup_size, details);
        std::printf("kept %s for %s on %s in %s\n", best->config.name().c_str(), model_key.c_str(), device_key.c_str(),
                    path.c_str());
    }
    if (args.has("--json")) {
        nlohmann::json out = {{"model", file.path}, {"model_key", model_key}, {"device", device_key},
                              {"decode_tokens_per_run", tokens}, {"runs", runs}, {"block_tokens", block},
                              {"configs", table}, {"best", best->config.name()},
                              {"default", untuned->config.name()},
                              {"default_decode_ms_per_token", untuned->decode_ms}};
        write_file_atomically(args.str("--json"), json_text(out));
    }
    return gpu->validation_messages() > 0 ? 3 : 0;
}

}  // namespace medusa::cli
