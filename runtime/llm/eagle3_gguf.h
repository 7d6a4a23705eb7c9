// llama.cpp's EAGLE-3 draft files: a GGUF of the "eagle3" architecture, as its converter
// (convert_hf_to_gguf.py, from SafeAILab's or SpecForge's checkpoints) writes them and
// src/models/eagle3.cpp runs them. What differs from SafeAILab's own layout:
//   - eagle3.target_layers (older converters: eagle3.extract_layers) lists exactly three target
//     layers (their inputs, concatenated, go through fc), repeats allowed: the converter derives
//     them from the target's depth as 2, L/2, L-3, which repeat on small targets. A repeated
//     layer is read once here, and fc's column blocks for it are added up: the same product, a
//     narrower feature.
//   - eagle3.norm_before_fc (EAGLE-3.1's drafters): an RMSNorm with gains enc.output_norm.weight
//     over the three inputs side by side before fc (EagleLayer::feature_norm).
//   - d2t holds the target id of each draft id (not SafeAILab's offset), as GGML's I64; no t2d.
//   - q and k rows are already in adjacent-pair RoPE order (the converter permuted them), as
//     EagleLayer keeps them.
//   - names: fc.weight, blk.0.{attn_norm (input_layernorm), attn_norm_2 (hidden_norm), attn_q,
//     attn_k, attn_v, attn_output, ffn_norm (post_attention_layernorm), ffn_gate, ffn_up,
//     ffn_down}.weight, output_norm.weight, output.weight (the draft head).
// Llama 3's RoPE scaling comes as rope_freqs.weight, as for models. The target's tokenizer, which
// the converter copies in, is not read: the target's own is used. Not run:
// eagle3.norm_before_residual (RedHat's speculators), norm_before_fc over layers listed unequally
// often, and a draft without its own head; each is refused naming the file. A token_embd of the
// draft's own is not used: the target's embedding is, as for SafeAILab's checkpoints.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "llm/eagle_layer.h"

namespace medusa {

// Throws FormatError naming `path` and the key or tensor that is missing, misshapen or does not
// fit `target`.
EagleLayer load_eagle3_gguf(const std::string& path, const LlamaConfig& target);
// The same from the file's bytes, `name` in errors.
EagleLayer load_eagle3_gguf(std::shared_ptr<const std::vector<uint8_t>> bytes, const std::string& name,
                            const LlamaConfig& target);

}  // namespace medusa
