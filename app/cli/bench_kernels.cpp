#include "bench_kernels.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "context_size.h"
#include "tile_choice.h"
#include "llm/gpu_model.h"
#include "llm/kernel_params.h"
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

std::vector<int> tile_block_sizes(int max_block) {
    std::vector<int> sizes;
    for (int n : {12, 16, 32, 64})
        if (n < max_block) sizes.push_back(n);
    if (max_block > int(kernels::kMatmulTile)) sizes.push_back(max_block);
    return sizes;
}

// The tiled kernel's round: forward passes over blocks of more tokens than the untiled kernel's
// tile, for the kept configuration untiled (tile: none) or with one tile shape; the first round
// keeps the largest block's last logits, which the shape's must match to be kept.
void time_tile_round(GpuModel& model, MatmulConfig config, TileTiming& t, const std::vector<int>& sizes) {
    config.tiled_from = t.tile ? 1 : 0;
    if (t.tile) config.tile = *t.tile;
    model.set_matmul_config(config);
    t.block_ms.resize(sizes.size(), 1e30);
    const int vocab = model.config().vocab_size;
    for (size_t i = 0; i < sizes.size(); ++i) {
        model.forward(TokenBlock::causal(1, block_tokens(sizes[i], vocab)));  // builds and records: not timed
        if (i + 1 == sizes.size() && t.last_logits.empty()) {
            const std::span<const float> l = model.logits(sizes[i] - 1);
            t.last_logits.assign(l.begin(), l.end());
        }
        const auto t0 = Clock::now();
        model.forward(TokenBlock::causal(1, block_tokens(sizes[i], vocab)));
        t.block_ms[i] = std::min(t.block_ms[i], ms_since(t0));
    }
}

// Rounds over every configuration in turn, best of the rounds: a machine's drift over the
// minutes of a run affects them all alike.
std::vector<ConfigTiming> time_configs(GpuModel& model, const std::vector<MatmulConfig>& candidates, int runs,
                                       int tokens, int block) {
    std::vector<ConfigTiming> rows;
    for (const MatmulConfig& c : candidates) rows.push_back({c});
    for (int r = 0; r < runs; ++r)
        for (size_t i = 0; i < rows.size(); ++i) {
            time_round(model, rows[i], tokens, block);
            std::fprintf(stderr, "round %d/%d [%zu/%zu] %-12s decode %9.3f ms/token, forward(%d) %9.3f ms\n", r + 1,
                         runs, i + 1, rows.size(), rows[i].config.name().c_str(), rows[i].decode_ms, block,
                         rows[i].block_ms);
        }
    return rows;
}

// Decoding is what runs most; a verify block decides between configurations within 2%.
std::vector<ConfigTiming>::const_iterator fastest(const std::vector<ConfigTiming>& rows) {
    return std::min_element(rows.begin(), rows.end(), [](const ConfigTiming& a, const ConfigTiming& b) {
        if (std::abs(a.decode_ms - b.decode_ms) > 0.02 * std::min(a.decode_ms, b.decode_ms)) return a.decode_ms < b.decode_ms;
        return a.block_ms < b.block_ms;
    });
}

// The configurations' table on stdout, and the same as the --json report's "configs".
nlohmann::json report_configs(const std::vector<ConfigTiming>& rows, const ConfigTiming& best,
                              const ConfigTiming& untuned) {
    nlohmann::json table = nlohmann::json::array();
    std::printf("%-14s %16s %18s %14s\n", "matmul config", "decode ms/token", "forward(block) ms", "x best decode");
    for (const ConfigTiming& t : rows) {
        std::printf("%-14s %16.3f %18.3f %14.2f%s\n", t.config.name().c_str(), t.decode_ms, t.block_ms,
                    t.decode_ms / best.decode_ms, &t == &best ? "  <- kept" : "");
        table.push_back({{"config", t.config.name()}, {"texel", t.config.texel}, {"workgroup", t.config.workgroup},
                         {"rows", t.config.rows},
                         {"decode_ms_per_token", t.decode_ms}, {"forward_block_ms", t.block_ms}});
    }
    std::printf("untuned default %s: decode %.3f ms/token, so the tuned one is %.2fx as fast\n",
                untuned.config.name().c_str(), untuned.decode_ms, untuned.decode_ms / best.decode_ms);
    return table;
}

// The tiled kernel with the configuration `kept`: which shape, and from which block size (set in
// `kept`); its table on stdout, and the same as the --json report's "tiles".
nlohmann::json tune_tiling(GpuModel& model, gpu::Context& gpu, const std::vector<int>& sizes, int runs,
                           MatmulConfig& kept) {
    std::vector<TileTiming> tiles{{std::nullopt}};
    for (const MatmulTile& t : tile_candidates(gpu)) tiles.push_back({t});
    for (int r = 0; r < runs; ++r)
        for (TileTiming& t : tiles) {
            time_tile_round(model, kept, t, sizes);
            std::fprintf(stderr, "round %d/%d tiles %-18s forward(%d) %9.3f ms\n", r + 1, runs, t.name().c_str(),
                         sizes.back(), t.block_ms.back());
        }
    for (TileTiming& t : tiles) {
        t.logit_error = logit_error(t.last_logits, tiles.front().last_logits);
        if (t.logit_error > kTileLogitTolerance)
            std::printf("tiles %s: logits differ from the untiled kernel's by %.3g of their largest, so they are not "
                        "kept\n",
                        t.name().c_str(), double(t.logit_error));
    }
    choose_tiling(tiles, sizes, kept);
    std::printf("\n%-18s", "tiles");
    for (int n : sizes) std::printf(" %12s", ("forward(" + std::to_string(n) + ")").c_str());
    std::printf("  ms\n");
    nlohmann::json tile_table = nlohmann::json::array();
    for (const TileTiming& t : tiles) {
        std::printf("%-18s", t.name().c_str());
        nlohmann::json ms = nlohmann::json::object();
        for (size_t i = 0; i < sizes.size(); ++i) {
            std::printf(" %12.3f", t.block_ms[i]);
            ms[std::to_string(sizes[i])] = t.block_ms[i];
        }
        std::printf("%s\n", t.tile == kept.tile && kept.tiled_from ? "  <- kept" : "");
        tile_table.push_back({{"tile", t.name()}, {"forward_ms", ms}, {"logit_error", t.logit_error}});
    }
    if (kept.tiled_from)
        std::printf("blocks of %u tokens or more run in %s tiles\n", kept.tiled_from, kept.tile.name().c_str());
    else
        std::printf("no block size timed runs faster tiled: blocks stay untiled\n");
    return tile_table;
}

}  // namespace

int run_kernel_tuning(const Args& args) {
    ModelFile file = open_model(args);
    auto gpu = open_gpu(args, &file);
    const bool big = file.config.dim >= 1024;
    const int tokens = std::max(1, args.integer("--tokens", big ? 3 : 32));
    const int runs = std::max(1, args.integer("--runs", big ? 2 : 5));
    // Blocks above the untiled kernel's 8 tokens time the tiled kernel: up to 64 by default on
    // GPUs, none on CPU drivers (where it is off untuned, and a round of 1B-sized blocks takes
    // minutes) unless --max-block asks.
    const bool cpu_driver = kernels::prefers_cpu_layouts(*gpu);
    const int max_block = std::clamp(args.integer("--max-block", cpu_driver ? 8 : 64), 1, TokenBlock::kMaxTokens);
    const int block = std::min(max_block, int(kernels::kMatmulTile));
    const int context = context_size(args, file, file.format == ModelFormat::Synthetic ? 1024 : 0);
    GpuModel model(*gpu, file, {.context = context, .matmul = MatmulConfig{}});
    const std::string device_key = tuning_device_key(*gpu), model_key = tuning_model_key(file);
    const std::vector<MatmulConfig> candidates = matmul_candidates(*gpu, model.matmuls().cpu_layouts());
    std::fprintf(stderr, "tuning the matrix kernels for %s on %s: %zu configurations\n", model_key.c_str(),
                 gpu->info().name.c_str(), candidates.size());

    const std::vector<ConfigTiming> rows = time_configs(model, candidates, runs, tokens, block);
    const auto best = fastest(rows);
    const MatmulConfig fallback = default_matmul_config(*gpu, model.matmuls().cpu_layouts());
    const auto untuned = std::find_if(rows.begin(), rows.end(), [&](const ConfigTiming& t) { return t.config == fallback; });
    if (untuned == rows.end()) throw std::logic_error("the default matmul configuration is not a candidate");
    const nlohmann::json table = report_configs(rows, *best, *untuned);

    MatmulConfig kept = best->config;
    const std::vector<int> sizes = tile_block_sizes(max_block);
    const nlohmann::json tile_table = sizes.empty() ? nlohmann::json::array() : tune_tiling(model, *gpu, sizes, runs, kept);
    const nlohmann::json details = {{"decode_ms_per_token", best->decode_ms}, {"forward_block_ms", best->block_ms},
                                    {"block_tokens", block}, {"default_decode_ms_per_token", untuned->decode_ms}};
    const std::string path = args.str("--tune-out", kernel_tuning_path());
    if (!path.empty()) {
        save_tuned_matmul(path, device_key, model_key, kept, gpu->info().subgroup_size, details);
        std::printf("kept %s for %s on %s in %s\n", kept.name().c_str(), model_key.c_str(), device_key.c_str(),
                    path.c_str());
    }
    if (args.has("--json")) {
        nlohmann::json out = {{"model", file.path}, {"model_key", model_key}, {"device", device_key},
                              {"decode_tokens_per_run", tokens}, {"runs", runs}, {"block_tokens", block},
                              {"configs", table}, {"best", best->config.name()}, {"kept", kept.name()},
                              {"tile_block_tokens", sizes}, {"tiles", tile_table},
                              {"default", untuned->config.name()},
                              {"default_decode_ms_per_token", untuned->decode_ms}};
        write_file_atomically(args.str("--json"), json_text(out));
    }
    return gpu->validation_messages() > 0 ? 3 : 0;
}

}  // namespace medusa::cli
