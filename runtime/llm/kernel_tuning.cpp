#include "llm/kernel_tuning.h"

#include <cstdlib>
#include <filesystem>
#include <variant>

#include "llm/kernel_params.h"
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
    // Rows per subgroup matter only to the subgroup layout (GPUs).
    const std::vector<uint32_t> rows = cpu_layouts ? std::vector<uint32_t>{1} : std::vector<uint32_t>{1, 2, 4};
    std::vector<MatmulConfig> out;
    for (bool texel : {false, true})
        for (uint32_t wg : {32u, 64u, 128u, 256u})
            for (uint32_t r : rows)
                if (const MatmulConfig c{texel, wg, r}; matmul_config_problem(c, limits).empty()) out.push_back(c);
    return out;
}

MatmulConfig default_matmul_config(const gpu::Context& ctx, bool cpu_layouts) {
    MatmulConfig c;
    c.texel = cpu_layouts;
    c.workgroup = std::max(64u, ctx.info().subgroup_size);
    // One row per subgroup: on an H100 at TinyLlama-1.1B shapes (q4_0) two rows decoded 2.5% slower
    // and four 45% slower (docs/gpu-h100.md); the tuner tries them per model and device.
    c.rows = 1;
    return c;
}

MatmulLimits matmul_limits(const gpu::Context& ctx) {
    return {ctx.info().subgroup_size, ctx.limits().max_workgroup_size};
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

// The entry's configuration, or what is wrong with its shape.
std::variant<TuningEntry, std::string> read_entry(const json& e) {
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
    return t;
}

}  // namespace

std::optional<MatmulConfig> tuned_matmul(const json& j, const std::string& path, const std::string& device_key,
                                         const std::string& model_key, const MatmulLimits& limits) {
    if (!j.is_object()) return std::nullopt;
    const auto d = j.find(device_key);
    if (d == j.end() || !d->is_object()) return std::nullopt;
    const auto m = d->find(model_key);
    if (m == d->end()) return std::nullopt;
    const auto entry = read_entry(*m);
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
                                              const std::string& model_key, const MatmulLimits& limits) {
    return tuned_matmul(read_tuning_file(path), path, device_key, model_key, limits);
}

json with_tuned_matmul(json j, const std::string& device_key, const std::string& model_key, const MatmulConfig& config,
                       uint32_t subgroup_size, const json& details) {
    if (!j.is_object()) j = json::object();
    json e = details.is_object() ? details : json::object();
    e["texel"] = config.texel;
    e["workgroup"] = config.workgroup;
    e["rows"] = config.rows;
    e["subgroup"] = subgroup_size;
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
