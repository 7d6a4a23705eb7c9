// What every training loop shares: numbers for its progress lines, and the optimizer half of a
// resumable checkpoint (AdamW's moments and the last finished step; the parameters are saved
// beside it in their own model's layout).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace medusa::train {

// One number printf-formatted, e.g. fmt("%.3f", loss).
std::string fmt(const char* format, double v);

struct OptimizerCheckpoint {
    std::vector<float> m, v;  // AdamW's first and second moments, flat
    int step = 0;             // the last step they include
};
// DIR/optimizer.safetensors, beside the parameters the loop saves into DIR.
void save_optimizer_checkpoint(const std::string& dir, const OptimizerCheckpoint& c, uint64_t seed);
// With `resume` and a checkpoint in `dir` (empty: none): its optimizer state, and a log line
// saying where the run resumes; the caller loads the parameters from `dir`.
std::optional<OptimizerCheckpoint> find_resume_point(const std::string& dir, bool resume,
                                                     const std::function<void(const std::string&)>& log);

}  // namespace medusa::train
