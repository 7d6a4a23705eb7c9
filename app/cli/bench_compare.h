// `medusa bench --compare plain,medusa,draft,draft-tree,ngram,eagle,auto` ("ar" for plain too): decoding modes side by
// side on the same target, engine and prompts, all through the same speculative loop, timed in
// rounds (run 1 of every mode, then run 2 of every mode, ...) so that the machine's other work
// falls on all of them alike. Greedy unless --temp says otherwise, so every mode emits the same
// text and only the speed differs.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "args.h"
#include "llm/gpu_model.h"
#include "model/model_file.h"

namespace medusa::cli {

// Prints a table per prompt set; returns per mode (keyed as bench_mode.h writes them) tokens/s, ratio to plain decoding, tau (tokens per
// verify pass), alpha (accepted share of the drafted depth), submits per step and per-stage GPU
// time of one step. With "ngram" or "auto" among the modes a second prompt set retells a story
// the prompt already holds, where copying pays; --prompts FILE adds a set of its own.
nlohmann::json bench_compare(const Args& args, GpuModel& model, const ModelFile& file,
                             const std::vector<int>& fallback_prompt, int n_tokens, int runs);

// Median latency of one forward over blocks of 1, 2, 4, ... 128 tokens after `position` cached ones.
nlohmann::json bench_verify_latency(GpuModel& model, int position, int runs, int max_block);
// forward(T)/forward(1) per block size T of a verify_latency table, keyed by T ("1", "2", ...).
nlohmann::json forward_ratios(const nlohmann::json& latency);

}  // namespace medusa::cli
