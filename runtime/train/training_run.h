// One training run, whatever it trains: the schedule (steps, batch, warm-up and cosine decay of
// the learning rate), each step's batch drawn from (seed, step) alone, progress lines at a fixed
// cadence, resumable checkpoints committed as one folder, and the run's time and speed. What is
// trained, and on what loss, is the objective's (train/training_objective.h).
#pragma once

#include "train/training_schedule.h"

namespace medusa::train {

class TrainingObjective;

struct RunSummary {
    int steps_done = 0;      // this run (fewer than the schedule's when resumed)
    double wall_s = 0;
    double positions_per_s = 0;  // what the objective's steps trained, per second
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
