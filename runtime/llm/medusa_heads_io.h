// Medusa heads in Medusa's Hugging Face layout: medusa_lm_head.safetensors (+ config.json with
// medusa_num_heads, medusa_num_layers); keys <k>.<l>.linear.weight|bias and <k>.<L>.weight,
// optionally prefixed "medusa_head.".
#pragma once
#include <string>

#include "llm/medusa_heads.h"

namespace medusa {

// `path` is the .safetensors file or the folder holding it.
MedusaHeads load_medusa_heads(const std::string& path, const LlamaConfig& model);
void save_medusa_heads(const MedusaHeads& heads, const std::string& folder);

}  // namespace medusa
