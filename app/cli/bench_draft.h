// `medusa bench --compare ar,medusa,draft --draft-model A.bin[,B.bin]`: plain, Medusa and
// draft-model decoding side by side on the same target, GPU and prompts (greedy, so every
// mode emits the same text and only the speed differs).
#pragma once
#include <nlohmann/json.hpp>
#include <vector>

#include "args.h"
#include "llm/gpu_model.h"

namespace medusa::cli {

// Prints a table; returns per mode tokens/s, ratio to AR, tau (tokens per target forward),
// alpha (accepted share of drafted tokens) and per-stage GPU time of one step.
nlohmann::json bench_compare(const Args& args, GpuModel& model, const ModelFile& file,
                             const std::vector<int>& fallback_prompt, int n_tokens, int runs);

}  // namespace medusa::cli
