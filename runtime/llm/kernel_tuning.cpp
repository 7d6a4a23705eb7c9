#include "llm/kernel_tuning.h"

#include <cstdlib>
#include <filesystem>
#include <variant>

#include "llm/kernel_params.h"
#include "llm/token_block.h"
#include "model/atomic_file.h"
#include "model/json_file.h"
#include "model/runtime_warning.h"

namespace medusa {

using nlohmann::json;

std::string kernel_tuning_path() {
    if (const char* c = std::getenv("MEDUSA_CACHE"); c && *c) return std::string(c) + "/kernel-tuning.json";
    if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/medusa-vk/kernel-tuning.json";
    return "";
}

std::string tuning_device_key(const gpu::Context& ctx) { return ctx.info().name + " | " + ctx.info().driver; }

std::string tuning_model_key(const ModelFile& file) {
    const LlamaConfig& c = file.config;
    const Tensor* ffn = file.find("layers.0.w1");
    const std::string type = ffn ? dtype_name(ffn->type) : "unknown";
    return type + " " + std::to_string(c.dim) + "x" + std::to_string(c.hidden_dim) + "x" + std::to_string(c.n_layers) +
           " v" + std::to_string(c.vocab_size);
}

std::vector<MatmulConfig> matmul_candidates(const gpu::Context& ctx, bool cpu_layouts) {
    const MatmulLimits limits = matmul_limits(ctx);
    const MatmulConfig def = default_matmul_config(ctx, cpu_layouts);
    // Rows per subgroup and quads matter only to the subgroup layout (GPUs).
    const std::vector<uint32_t> rows = cpu_layouts ? std::vector<uint32_t>{1} : std::vector<uint32_t>{1, 2, 4};
    const std::vector<bool> quads = cpu_layouts ? std::vector<bool>{false} : std::vector<bool>{false, true};
    std::vector<MatmulConfig> out;
    for (bool texel : {false, true})
        for (uint32_t wg : {32u, 64u, 128u, 256u})
            for (uint32_t r : rows)
                for (bool q : quads)
                    if (const MatmulConfig c{texel, wg, r, def.tiled_from, def.tile, q};
                        matmul_config_problem(c, limits).empty())
                        out.push_back(c);
    return out;
}

MatmulConfig default_matmul_config(const gpu::Context& ctx, bool cpu_layouts) {
    MatmulConfig c;
    c.texel = cpu_layouts;
    c.workgroup = std::max(64u, ctx.info().subgroup_size);
    // One row per subgroup: on an H100 at TinyLlama-1.1B shapes (q4_0) two rows decoded 2.5% slower
    // and four 45% slower (docs/gpu-h100.md); the tuner tries them per model and device.
    c.rows = 1;
    // Four words a lane a step: a subgroup then has 16 bytes a lane in flight, not 4 (one q4_0
    // block's codes), as the engines that stream weights near bandwidth have (llama.cpp's
    // mul_mat_vec unrolls four 4-byte steps). Not yet timed on a GPU against one word: the tuner
    // tries both.
    c.quads = !cpu_layouts;
    // From 16 tokens the untiled kernel reads every weight twice or more; below, a tile would
    // leave most of its tokens empty. The tuner moves the threshold per model and device. CPU
    // drivers (whatever layouts they are given) tile nothing unless tuned to.
    c.tiled_from = kernels::prefers_cpu_layouts(ctx) ? 0 : 16;
    c.tile = MatmulTile{};
    return c;
}

std::vector<MatmulTile> tile_candidates(const gpu::Context& ctx) {
    const MatmulLimits limits = matmul_limits(ctx);
    std::vector<MatmulTile> out;
    for (const MatmulTile& t : matmul_tiles())
        if (t.kernel != TileKernel::EmulatedMatrixUnits && matmul_tile_problem(t, limits).empty()) out.push_back(t);
    return out;
}

bool tiling_from_environment(MatmulConfig& config) {
    const char* v = std::getenv("MEDUSA_TILED_MATMUL");
    if (!v || !*v) return false;
    const std::string value = v;
    if (value == "off") {
        config.tiled_from = 0;
        return true;
    }
    const size_t colon = value.find(':');
    const std::string from = value.substr(0, colon);
    const std::optional<MatmulTile> tile =
        colon == std::string::npos ? config.tile : matmul_tile_named(value.substr(colon + 1));
    char* end = nullptr;
    const unsigned long n = std::strtoul(from.c_str(), &end, 10);
    if (from.empty() || *end || from[0] == '-' || n < 1 || n > uint32_t(TokenBlock::kMaxTokens) || !tile)
        throw std::invalid_argument("MEDUSA_TILED_MATMUL='" + value +
                                    "' must be off, a block size from 1 to 128 from which blocks are tiled, or "
                                    "that and a tile shape (16:64x32), the shapes being " +
                                    matmul_tile_names());
    config.tiled_from = uint32_t(n);
    config.tile = *tile;
    return true;
}

bool quads_from_environment(MatmulConfig& config) {
    const char* v = std::getenv("MEDUSA_MATMUL_QUADS");
    if (!v || !*v) return false;
    const std::string value = v;
    if (value != "on" && value != "off")
        throw std::invalid_argument("MEDUSA_MATMUL_QUADS='" + value + "' must be on or off");
    config.quads = value == "on";
    return true;
}

std::string matmul_config_problem(const MatmulConfig& config, const MatmulLimits& limits) {
    const uint32_t wg = config.workgroup, sub = limits.subgroup_size;
    if (wg == 0 || (wg & (wg - 1)) != 0) return "workgroup " + std::to_string(wg) + " is not a power of two";
    if (sub == 0 || wg % sub != 0)
        return "workgroup " + std::to_string(wg) + " is not a multiple of the device's subgroup size " +
               std::to_string(sub);
    if (wg > limits.max_workgroup_size)
        return "workgroup " + std::to_string(wg) + " is more than the device's largest, " +
               std::to_string(limits.max_workgroup_size);
    if (config.rows < 1 || config.rows > kernels::kMatmulMaxRows)
        return "rows " + std::to_string(config.rows) + " is not from 1 to " + std::to_string(kernels::kMatmulMaxRows);
    if (config.tiled_from > uint32_t(TokenBlock::kMaxTokens))
        return "tiled_from " + std::to_string(config.tiled_from) + " is more than a block's " +
               std::to_string(TokenBlock::kMaxTokens) + " tokens";
    if (config.tiled_from > 0) return matmul_tile_problem(config.tile, limits);
    return "";
}

namespace {

json read_tuning_file(const std::string& path) { return read_cache_object(path, "kernel tuning"); }

// A count in a JSON value: an unsigned integer below 2^32.
std::optional<uint32_t> count_of(const json& v) {
    if (!v.is_number_unsigned() || v.get<uint64_t>() > UINT32_MAX) return std::nullopt;
    return uint32_t(v.get<uint64_t>());
}

struct TuningEntry {
    MatmulConfig config;
    std::optional<uint32_t> subgroup;  // the subgroup size it was tuned under; none in older files
};

// The entry's configuration, or what is wrong with its shape; what it lacks comes from `untuned`.
std::variant<TuningEntry, std::string> read_entry(const json& e, const MatmulConfig& untuned) {
    if (!e.is_object() || !e.contains("texel") || !e["texel"].is_boolean() || !e.contains("workgroup") ||
        !count_of(e["workgroup"]))
        return std::string("needs \"texel\" (true/false) and \"workgroup\" (a count), not ") + json_excerpt(e);
    TuningEntry t;
    t.config.texel = e["texel"].get<bool>();
    t.config.workgroup = *count_of(e["workgroup"]);
    t.config.rows = 1;  // files written before rows per subgroup were tuned
    if (e.contains("rows")) {
        const auto rows = count_of(e["rows"]);
        if (!rows) return "rows " + json_excerpt(e["rows"]) + " is not a count";
        t.config.rows = *rows;
    }
    if (e.contains("subgroup")) {
        t.subgroup = count_of(e["subgroup"]);
        if (!t.subgroup) return "subgroup " + json_excerpt(e["subgroup"]) + " is not a count";
    }
    t.config.tiled_from = untuned.tiled_from;
    t.config.tile = untuned.tile;
    t.config.quads = untuned.quads;  // files written before lanes could read quads
    if (e.contains("quads")) {
        if (!e["quads"].is_boolean()) return "quads " + json_excerpt(e["quads"]) + " is not true or false";
        t.config.quads = e["quads"].get<bool>();
    }
    if (e.contains("tiled_from")) {
        const auto from = count_of(e["tiled_from"]);
        if (!from) return "tiled_from " + json_excerpt(e["tiled_from"]) + " is not a count";
        t.config.tiled_from = *from;
    }
    if (e.contains("tile")) {
        const auto tile = e["tile"].is_string() ? matmul_tile_named(e["tile"].get<std::string>()) : std::nullopt;
        if (!tile) return "tile " + json_excerpt(e["tile"]) + " is not one of " + matmul_tile_names();
        t.config.tile = *tile;
    }
    return t;
}

}  // namespace

std::optional<MatmulConfig> tuned_matmul(const json& j, const std::string& path, const std::string& device_key,
                                         const std::string& model_key, const MatmulLimits& limits,
                                         const MatmulConfig& untuned) {
    if (!j.is_object()) return std::nullopt;
    const auto d = j.find(device_key);
    if (d == j.end() || !d->is_object()) return std::nullopt;
    const auto m = d->find(model_key);
    if (m == d->end()) return std::nullopt;
    const auto entry = read_entry(*m, untuned);
    std::string problem;
    if (const auto* why = std::get_if<std::string>(&entry)) {
        problem = *why;
    } else {
        const TuningEntry& t = std::get<TuningEntry>(entry);
        if (t.subgroup && *t.subgroup != limits.subgroup_size)
            problem = "tuned for subgroups of " + std::to_string(*t.subgroup) + " lanes, but the device runs " +
                      std::to_string(limits.subgroup_size);
        else
            problem = matmul_config_problem(t.config, limits);
        if (problem.empty()) return t.config;
    }
    runtime_warning(path + ": kernel tuning entry '" + model_key + "' on '" + device_key + "': " + problem +
                    "; ignored (`medusa bench --tune-kernels` tunes it again)");
    return std::nullopt;
}

std::optional<MatmulConfig> load_tuned_matmul(const std::string& path, const std::string& device_key,
                                              const std::string& model_key, const MatmulLimits& limits,
                                              const MatmulConfig& untuned) {
    return tuned_matmul(read_tuning_file(path), path, device_key, model_key, limits, untuned);
}

json with_tuned_matmul(json j, const std::string& device_key, const std::string& model_key, const MatmulConfig& config,
                       uint32_t subgroup_size, const json& details) {
    if (!j.is_object()) j = json::object();
    json e = details.is_object() ? details : json::object();
    e["texel"] = config.texel;
    e["workgroup"] = config.workgroup;
    e["rows"] = config.rows;
    e["quads"] = config.quads;
    e["subgroup"] = subgroup_size;
    e["tile"] = config.tile.name();
    e["tiled_from"] = config.tiled_from;
    if (!j.contains(device_key) || !j[device_key].is_object()) j[device_key] = json::object();
    j[device_key][model_key] = e;
    return j;
}

void save_tuned_matmul(const std::string& path, const std::string& device_key, const std::string& model_key,
                       const MatmulConfig& config, uint32_t subgroup_size, const json& details) {
    const json j = with_tuned_matmul(read_tuning_file(path), device_key, model_key, config, subgroup_size, details);
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    write_file_atomically(path, json_text(j));
}

}  // namespace medusa
