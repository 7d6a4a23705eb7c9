#include "llm/kernel_tuning.h"

#include <cstdlib>
#include <filesystem>

#include "llm/kernel_params.h"
#include "model/atomic_file.h"
#include "model/json_file.h"

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
    const uint32_t sub = std::max(1u, ctx.info().subgroup_size);
    // Rows per subgroup matter only to the subgroup layout (GPUs).
    const std::vector<uint32_t> rows = cpu_layouts ? std::vector<uint32_t>{1} : std::vector<uint32_t>{1, 2, 4};
    std::vector<MatmulConfig> out;
    for (bool texel : {false, true})
        for (uint32_t wg : {32u, 64u, 128u, 256u})
            for (uint32_t r : rows)
                if (wg % sub == 0) out.push_back({texel, wg, r});
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

namespace {

json read_tuning_file(const std::string& path) { return read_cache_object(path, "kernel tuning"); }

}  // namespace

std::optional<MatmulConfig> load_tuned_matmul(const std::string& path, const std::string& device_key,
                                              const std::string& model_key) {
    const json j = read_tuning_file(path);
    const auto d = j.find(device_key);
    if (d == j.end() || !d->is_object()) return std::nullopt;
    const auto m = d->find(model_key);
    if (m == d->end()) return std::nullopt;
    const json& e = *m;
    if (!e.is_object() || !e.contains("texel") || !e["texel"].is_boolean() || !e.contains("workgroup") ||
        !e["workgroup"].is_number_unsigned())
        throw FormatError(path + ": entry '" + model_key + "' needs \"texel\" (true/false) and \"workgroup\" (a count)");
    const uint64_t wg = e["workgroup"].get<uint64_t>();
    if (wg == 0 || wg > 1024 || (wg & (wg - 1)) != 0)
        throw FormatError(path + ": entry '" + model_key + "': workgroup " + std::to_string(wg) +
                          " is not a power of two from 1 to 1024");
    uint64_t rows = 1;  // files written before rows per subgroup were tuned
    if (e.contains("rows")) {
        if (!e["rows"].is_number_unsigned() || e["rows"].get<uint64_t>() < 1 ||
            e["rows"].get<uint64_t>() > kernels::kMatmulMaxRows)
            throw FormatError(path + ": entry '" + model_key + "': rows must be a count from 1 to " +
                              std::to_string(kernels::kMatmulMaxRows));
        rows = e["rows"].get<uint64_t>();
    }
    return MatmulConfig{e["texel"].get<bool>(), uint32_t(wg), uint32_t(rows)};
}

void save_tuned_matmul(const std::string& path, const std::string& device_key, const std::string& model_key,
                       const MatmulConfig& config, const json& details) {
    json j = read_tuning_file(path);
    json e = details.is_object() ? details : json::object();
    e["texel"] = config.texel;
    e["workgroup"] = config.workgroup;
    e["rows"] = config.rows;
    if (!j.contains(device_key) || !j[device_key].is_object()) j[device_key] = json::object();
    j[device_key][model_key] = e;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    write_file_atomically(path, json_text(j));
}

}  // namespace medusa
