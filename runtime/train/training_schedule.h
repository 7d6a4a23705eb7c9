// A training run's schedule: its steps and batch, the learning rate's warm-up and cosine decay,
// its checkpoints and how it is stopped, and where its progress lines go.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "train/checkpoint_identity.h"

namespace medusa::train {

struct TrainOptions {
    int steps = 1000;
    int batch = 256;            // per step: positions (heads) or sequences (EAGLE)
    float lr = 3e-3f;           // peak
    float warmup = 0.05f;       // fraction of the steps
    float min_lr_ratio = 0.05f;  // cosine floor, relative to the peak
    float weight_decay = 0.0f;
    float clip = 1.0f;
    uint64_t seed = 0;
    int log_every = 50;
    int checkpoint_every = 0;   // 0: only at the end
    std::string checkpoint_dir; // empty: no checkpoints
    bool resume = false;
    CheckpointIdentity identity;  // recorded in each checkpoint; a resume must match it
    int stop_at = 0;            // >0: checkpoint and stop after this step, as an interruption would
    std::function<bool()> interrupted;  // true: checkpoint and stop after the current step (Ctrl-C)
};

float learning_rate(const TrainOptions& o, int step);  // step counts from 1
// Whether a loop saves a checkpoint after `step` (every checkpoint_every steps, at the end, and
// at stop_at or when interrupted) and whether it stops there.
struct CheckpointAfter {
    bool save = false, stop = false;
};
CheckpointAfter checkpoint_after(const TrainOptions& o, int step);

using LogFn = std::function<void(const std::string&)>;

}  // namespace medusa::train
