// Hugging Face Llama checkpoints in safetensors: a folder with config.json and model.safetensors
// or model.safetensors.index.json + shards, or one .safetensors file with config.json beside it.
// q/k rows are put back into llama2.c's adjacent-pair RoPE order (HF stores rotate_half order).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/model_file.h"
#include "model/rope_rows.h"
#include "model/safetensors_file.h"

namespace medusa {

ModelFile load_hf(const std::string& path);

// The same from parts already read: the shards and the text of config.json; `name` is used in errors.
ModelFile load_hf_from_parts(std::vector<SafetensorsFile> shards, const std::string& config_json,
                             const std::string& name);

}  // namespace medusa
