// Random weights in the shapes of real models, to measure speed at realistic sizes.
// Everything built here is labelled synthetic: its text is noise.
#pragma once
#include <string>
#include <vector>

#include "model/model_file.h"

namespace medusa {

// Known names: tinyllama-1.1b, llama-7b, llama2-13b, stories15m, stories110m, qwen3-0.6b, qwen3-4b,
// qwen3-8b, gemma3-270m, gemma3-1b, gemma3-4b, phi-4-mini (synthetic_model_names()), and NAME:llama, NAME's
// dimensions as a plain Llama (what a family's features cost). dtype: any GGUF type
// (model/block_format.h); matrices hold random bits under scales that keep values near 1/sqrt(cols).
ModelFile make_synthetic_model(const std::string& name, DType dtype, uint64_t seed = 1);
// The same model's configuration and tensor table without its bytes (every Tensor::data null):
// what a memory plan reads, at no cost.
ModelFile synthetic_model_shapes(const std::string& name, DType dtype);
std::vector<std::string> synthetic_model_names();

}  // namespace medusa
