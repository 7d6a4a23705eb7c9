// RoPE scaling as Hugging Face configs state it (rope_scaling): Llama 3's per-frequency factors,
// which llama.cpp's converter writes as the rope_freqs tensor, and linear position scaling.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace medusa {

struct LlamaConfig;

// Llama 3.1+'s factor for each of the head_dim/2 rotation frequencies (convert_hf_to_gguf.py's
// formula): 1 for short wavelengths, `factor` for long ones, a smooth blend between.
std::vector<float> llama3_rope_factors(float theta, int head_dim, double factor, double low_freq_factor,
                                       double high_freq_factor, double original_context);

// A Hugging Face config's "rope_scaling": null, {"rope_type"|"type": "llama3", factor,
// low_freq_factor, high_freq_factor, original_max_position_embeddings} (returned as the factors,
// from c.rope_theta and c.head_dim()) or {"type": "linear", factor} (sets c.rope_position_scale;
// returns none). Anything else throws FormatError "<where>: rope_scaling ...".
std::vector<float> parse_rope_scaling(const nlohmann::json& config, LlamaConfig& c, const std::string& where);

}  // namespace medusa
