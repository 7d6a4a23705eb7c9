// RoPE scaling as Hugging Face configs state it (rope_scaling): Llama 3's per-frequency factors,
// which llama.cpp's converter writes as the rope_freqs tensor, and linear position scaling.
#pragma once
#include <string>
#include <vector>

namespace medusa {

// Llama 3.1+'s factor for each of the head_dim/2 rotation frequencies (convert_hf_to_gguf.py's
// formula): 1 for short wavelengths, `factor` for long ones, a smooth blend between.
std::vector<float> llama3_rope_factors(float theta, int head_dim, double factor, double low_freq_factor,
                                       double high_freq_factor, double original_context);

}  // namespace medusa
