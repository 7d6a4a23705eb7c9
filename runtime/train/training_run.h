// One training run, whatever it trains: the schedule (steps, batch, warm-up and cosine decay of
// the learning rate), each step's batch drawn from (seed, step) alone, progress lines at a fixed
// cadence, resumable checkpoints committed as one folder, and the run's time and speed. What is
// trained, and on what loss, is the objective's (train/training_objective.h).
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "train/checkpoint_identity.h"

namespace medusa::train {

class TrainingObjective;

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

struct RunSummary {
    int steps_done = 0;      // this run (fewer than the schedule's when resumed)
    double wall_s = 0;
    size_t positions = 0;    // what the objective's steps trained
    double positions_per_s = 0;
};

class TrainingRun {
public:
    TrainingRun(const TrainOptions& schedule, LogFn log = {}) : o_(schedule), log_(std::move(log)) {}
    // Starts `objective` (from the checkpoint when resuming) and steps it to the end of the
    // schedule, or to stop_at or an interruption, with a checkpoint there.
    RunSummary run(TrainingObjective& objective);

private:
    void save_checkpoint(const TrainingObjective& objective, int step) const;

    TrainOptions o_;
    LogFn log_;
};

}  // namespace medusa::train
