// What every training loop shares: numbers for its progress lines, and the optimizer half of a
// resumable checkpoint (AdamW's moments and the last finished step; the parameters are saved
// beside it in their own model's layout).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "train/checkpoint_identity.h"

namespace medusa::train {

// One number printf-formatted, e.g. fmt("%.3f", loss).
std::string fmt(const char* format, double v);

struct OptimizerCheckpoint {
    std::vector<float> m, v;  // AdamW's first and second moments, flat
    int step = 0;             // the last step they include
};
// DIR/optimizer.safetensors, beside the parameters the loop saves into DIR, recording `identity`.
void save_optimizer_checkpoint(const std::string& dir, const OptimizerCheckpoint& c, uint64_t seed,
                               const CheckpointIdentity& identity);
// Refuses (FormatError naming both) a checkpoint in `dir` of another identity, reading only its
// header: a resume on the wrong model fails at once, not after the training text is written.
void check_resumable(const std::string& dir, const CheckpointIdentity& identity);
// With `resume` and a checkpoint in `dir` (empty: none): its optimizer state, and a log line
// saying where the run resumes; the caller loads the parameters from `dir`. A checkpoint of
// another identity is refused (FormatError naming both), as check_resumable refuses it earlier.
std::optional<OptimizerCheckpoint> find_resume_point(const std::string& dir, bool resume,
                                                     const CheckpointIdentity& identity,
                                                     const std::function<void(const std::string&)>& log);

}  // namespace medusa::train
