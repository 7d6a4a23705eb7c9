// The matrix-kernel configuration measured fastest on a device for a model's shapes, kept in a
// JSON file (`bench --tune-kernels` writes it, every GpuModel reads it), as the tuned tree is:
//   { "<device> | <driver>": { "<weights> <dim>x<hidden>x<layers> v<vocab>": {config, timings} } }
// The config: "texel", "workgroup", "rows", "quads", the "subgroup" size it was tuned under (one driver
// may run either of two: RADV's wave32 and wave64), and the tiled kernel's "tile" shape and the
// block size it runs "tiled_from" (0: never). Without an entry the defaults below apply.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gpu/context.h"
#include "llm/matmul_recorder.h"
#include "model/model_file.h"

namespace medusa {

// $MEDUSA_CACHE/kernel-tuning.json, else ~/.cache/medusa-vk/kernel-tuning.json ("" without HOME).
std::string kernel_tuning_path();
std::string tuning_device_key(const gpu::Context& ctx);
// The model's weight type (that of layer 0's FFN) and shapes: what the kernels' speed depends on.
std::string tuning_model_key(const ModelFile& file);

// What the tuner times: texel views or storage loads, times the workgroup sizes the device allows
// (multiples of its subgroup size, 32 to 256 invocations, at most its largest workgroup), each
// with the default's tiling.
std::vector<MatmulConfig> matmul_candidates(const gpu::Context& ctx, bool cpu_layouts);
// Untuned: texel views with the CPU layouts (lavapipe: faster at every model size measured),
// storage loads with the GPU layouts; 64 invocations (or the subgroup size, if larger). GPUs tile
// blocks of 16 tokens or more in 64x32 tiles. CPU drivers tile nothing unless tuned to: barriers
// and per-lane shared loads cost them dearly (train_matmul.comp's TILED variant runs several
// times slower there than its DIRECT one).
MatmulConfig default_matmul_config(const gpu::Context& ctx, bool cpu_layouts);
// The tile shapes the device can run (the tuner's second round).
std::vector<MatmulTile> tile_candidates(const gpu::Context& ctx);
// MEDUSA_TILED_MATMUL, to compare the kernels on one model: "off", the block size from which
// blocks are tiled ("16"), or that and a tile shape ("16:64x64"). Sets `config`'s tiling and
// returns true when the variable is set; throws std::invalid_argument naming the variable and
// its value when that reads otherwise.
bool tiling_from_environment(MatmulConfig& config);

// MEDUSA_MATMUL_QUADS=on|off, to time both steps of the subgroup layout on one model: sets
// `config.quads` and returns true when the variable is set; throws std::invalid_argument naming
// it and its value when it is neither.
bool quads_from_environment(MatmulConfig& config);

// Why `config` cannot run under `limits` (llm/matmul_tiles.h), or "" when it can: the workgroup
// must be of whole subgroups (matmul.comp's rows are per lane or per subgroup, its shuffles and
// sums span a subgroup), a power of two,
// a multiple of the subgroup size and at most the device's largest; rows 1 to kMatmulMaxRows;
// tiled_from at most a block's 128 tokens, and a tile the device can run where it tiles.
std::string matmul_config_problem(const MatmulConfig& config, const MatmulLimits& limits);

// The entry for this device and model in the file at `path`; nothing when there is none. An
// entry that is malformed, was tuned under another subgroup size or cannot run under `limits`
// is never used: one warning (runtime_warning) names the file, the entry and the value. An
// entry without "subgroup" (files written before it was kept) is used when it fits `limits`:
// that alone makes its output right. One without "tile" and "tiled_from" (written before blocks
// were tiled) takes them from `untuned`. A file that is unreadable or not JSON throws FormatError
// naming it.
std::optional<MatmulConfig> load_tuned_matmul(const std::string& path, const std::string& device_key,
                                              const std::string& model_key, const MatmulLimits& limits,
                                              const MatmulConfig& untuned = {});
// The same for the file's JSON, read already (`path` names it in the warning).
std::optional<MatmulConfig> tuned_matmul(const nlohmann::json& tuning, const std::string& path,
                                         const std::string& device_key, const std::string& model_key,
                                         const MatmulLimits& limits, const MatmulConfig& untuned = {});
// Adds or replaces the entry (with `details`, e.g. the timings), keeping the others; atomic.
// with_tuned_matmul: the same for the file's JSON.
nlohmann::json with_tuned_matmul(nlohmann::json tuning, const std::string& device_key, const std::string& model_key,
                                 const MatmulConfig& config, uint32_t subgroup_size, const nlohmann::json& details);
void save_tuned_matmul(const std::string& path, const std::string& device_key, const std::string& model_key,
                       const MatmulConfig& config, uint32_t subgroup_size, const nlohmann::json& details);

}  // namespace medusa
