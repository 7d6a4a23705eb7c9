// The matrix-kernel configuration measured fastest on a device for a model's shapes, kept in a
// JSON file (`bench --tune-kernels` writes it, every GpuModel reads it), as the tuned tree is:
//   { "<device> | <driver>": { "<weights> <dim>x<hidden>x<layers> v<vocab>": {config, timings} } }
// Without an entry the defaults below apply.
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
// (multiples of its subgroup size, 32 to 256 invocations).
std::vector<MatmulConfig> matmul_candidates(const gpu::Context& ctx, bool cpu_layouts);
// Untuned: texel views with the CPU layouts (lavapipe: faster at every model size measured),
// storage loads with the GPU layouts; 64 invocations (or the subgroup size, if larger).
MatmulConfig default_matmul_config(const gpu::Context& ctx, bool cpu_layouts);

// The entry for this device and model in the file at `path`; nothing when there is none. A file
// that is unreadable or malformed throws FormatError naming it.
std::optional<MatmulConfig> load_tuned_matmul(const std::string& path, const std::string& device_key,
                                              const std::string& model_key);
// Adds or replaces the entry (with `details`, e.g. the timings), keeping the others; atomic.
void save_tuned_matmul(const std::string& path, const std::string& device_key, const std::string& model_key,
                       const MatmulConfig& config, const nlohmann::json& details);

}  // namespace medusa
