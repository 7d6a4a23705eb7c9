// What a TrainingRun trains: Medusa heads, heads with LoRA on the backbone (Medusa-2), an EAGLE
// layer or an EAGLE-3 drafter. The run owns the schedule, cadence and checkpoints; an objective
// owns its parameters, its batches and loss, and its checkpoint's files.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>

#include "train/checkpoint_identity.h"
#include "train/training_schedule.h"

namespace medusa::train {

enum class Objective { Heads, Joint, Eagle, Eagle3 };
const char* objective_name(Objective o);  // "heads", "joint", "eagle", "eagle3"
std::optional<Objective> objective_named(const std::string& name);

// Where a resumed run reads its checkpoint from, and what it must have been trained as.
struct ResumeFrom {
    std::string dir;  // a committed checkpoint; empty: a fresh start
    const CheckpointIdentity* identity = nullptr;
    LogFn log;
};

// What a checkpoint records beside the parameters and their moments.
struct CheckpointStamp {
    int step = 0;  // the last finished step
    uint64_t seed = 0;
    const CheckpointIdentity* identity = nullptr;
};

class TrainingObjective {
public:
    virtual ~TrainingObjective() = default;
    // Sets up the trainer from the initial parameters, or from the checkpoint in `from.dir`;
    // returns the last step that checkpoint holds (0: a fresh start).
    virtual int start(const ResumeFrom& from) = 0;
    // One optimizer step on a batch drawn from `rng` at peak-relative learning rate `lr`; returns
    // the positions it trained (what the speed counts).
    virtual size_t step(int step, float lr, std::mt19937_64& rng) = 0;
    // The progress line's part between "step N/M" and the speed (losses, accuracy, learning
    // rate, gradient norm) over the `steps` since the last line; starts the next sums.
    virtual std::string progress(int steps) = 0;
    virtual const char* speed_unit() const = 0;
    // The checkpoint's files in `dir`: parameters in their model's layout and their moments.
    virtual void save(const std::string& dir, const CheckpointStamp& stamp) const = 0;
};

}  // namespace medusa::train
