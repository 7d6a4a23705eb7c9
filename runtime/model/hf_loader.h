// Hugging Face Llama checkpoints in safetensors: a folder with config.json and model.safetensors
// or model.safetensors.index.json + shards, or one .safetensors file with config.json beside it.
// q/k rows are put back into llama2.c's adjacent-pair RoPE order (HF stores rotate_half order).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/model_file.h"
#include "model/safetensors_file.h"

namespace medusa {

ModelFile load_hf(const std::string& path);

// The same from parts already read: the shards and the text of config.json; `name` is used in errors.
ModelFile load_hf_from_parts(std::vector<SafetensorsFile> shards, const std::string& config_json,
                             const std::string& name);

// Reorders the rows of a q or k projection {n_heads * head_dim, cols} between HF's rotate_half
// layout and llama2.c's adjacent pairs; `to_hf` = true is HF's own conversion from Meta weights.
std::vector<uint8_t> permute_rope_rows(const uint8_t* data, int64_t rows, size_t row_bytes, int n_heads, bool to_hf);

}  // namespace medusa
