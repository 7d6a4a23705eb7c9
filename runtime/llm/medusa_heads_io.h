// Medusa heads in the layouts other tools publish and read:
//  - Medusa / TGI: medusa_lm_head.safetensors or medusa_lm_head.pt (+ config.json with
//    medusa_num_heads, medusa_num_layers); keys <k>.<l>.linear.weight|bias and <k>.<L>.weight,
//    optionally prefixed "medusa_head.". Without the <k>.<L>.weight keys (Medusa's legacy layout,
//    TGI's fallback) every head projects with the model's own classifier.
//  - vLLM: model.safetensors (+ config.json with num_heads, num_hidden_layers); keys
//    blocks.<k>.layers.<l>.weight|bias (bias only with medusa_fc_bias) and lm_heads.<k>.weight,
//    or one shared lm_heads.0.weight with original_lm_head.
// .pt files are PyTorch checkpoints, read without executing them (model/torch_checkpoint.h).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "llm/medusa_heads.h"

namespace medusa {

// `path` is a head file or the folder holding one; throws FormatError naming it.
MedusaHeads load_medusa_heads(const std::string& path, const LlamaConfig& model);
// The same from bytes already read: the head file (`head_name` in errors) and the text of the
// config.json beside it (nullopt: there is none; `config_name` in errors).
MedusaHeads load_medusa_heads_from_parts(std::shared_ptr<const std::vector<uint8_t>> head_file,
                                         const std::string& head_name, const std::optional<std::string>& config_json,
                                         const std::string& config_name, const LlamaConfig& model);

// Where saved heads are meant to be read.
struct HeadsExport {
    enum Layout {
        Medusa,  // f32, config.json naming the source as base_model_name_or_path (our training checkpoints)
        Tgi,     // f16, for text-generation-inference: config.json's base_model_name_or_path must be the base
                 // model's Hugging Face id or folder; no "architectures" key (TGI would take it for another speculator)
    } layout = Medusa;
    std::string base_model;  // Tgi: required
};
// Writes medusa_lm_head.safetensors and config.json into `folder`. Heads that share the model's
// classifier are written without <k>.<L>.weight.
void save_medusa_heads(const MedusaHeads& heads, const std::string& folder, const HeadsExport& how = {});

}  // namespace medusa
