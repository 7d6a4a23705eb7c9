// The Medusa half of `medusa bench`: plain vs Medusa decoding on the same prompts through the
// same GPU pipeline, and how the verify forward's latency grows with the tree size.
#pragma once
#include <nlohmann/json.hpp>
#include <vector>

#include "args.h"
#include "llm/gpu_model.h"

namespace medusa::cli {

nlohmann::json bench_medusa(const Args& args, GpuModel& model, const ModelFile& file,
                            const std::vector<std::vector<int>>& prompts, int n_tokens, int runs);
nlohmann::json bench_verify_latency(GpuModel& model, int prompt_len, int runs, int max_block);

}  // namespace medusa::cli
