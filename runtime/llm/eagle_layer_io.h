// EAGLE draft layers in EAGLE's own layout, both ways: a folder with config.json (a LlamaConfig
// with num_hidden_layers 1, and "bias" for fc's bias) and model.safetensors holding fc.weight,
// fc.bias, layers.0.self_attn.{q,k,v,o}_proj.weight, layers.0.mlp.{gate,up,down}_proj.weight and
// layers.0.post_attention_layernorm.weight. Embeddings and the LM head are the base model's. q and
// k rows are stored in Hugging Face's rotate_half order and kept here in adjacent-pair order.
#pragma once
#include <string>

#include "llm/eagle_layer.h"
#include "model/safetensors_file.h"

namespace medusa {

// `path`: the folder, or its model.safetensors or pytorch_model.bin (PyTorch's state dict, read
// by the restricted unpickler; model.safetensors first where a folder has both), or llama.cpp's
// EAGLE-3 GGUF (a file ending in .gguf; llm/eagle3_gguf.h). Throws FormatError naming the file and what does
// not fit `target` (hidden size, heads, missing or misshapen tensors).
EagleLayer load_eagle_layer(const std::string& path, const LlamaConfig& target);
// The same from parts already read: the weights and the text of config.json (`config_name` in errors).
EagleLayer load_eagle_layer_from_parts(const SafetensorsFile& weights, const std::string& config_json,
                                       const std::string& config_name, const LlamaConfig& target);
// Writes config.json (naming `base_model`) and model.safetensors into `folder`; an EAGLE-3 layer
// in SafeAILab's published layout (fc.weight, midlayer.*, norm.weight, lm_head.weight, d2t as I64
// offsets, t2d as BOOL marks; config.json with LlamaForCausalLMEagle3, draft_vocab_size and
// eagle_config.eagle_aux_hidden_state_layer_ids).
void save_eagle_layer(const EagleLayer& layer, const std::string& folder, const std::string& base_model);

}  // namespace medusa
