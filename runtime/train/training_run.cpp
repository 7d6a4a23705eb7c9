#include "train/training_run.h"

#include <algorithm>
#include <chrono>

#include "train/checkpoint_folder.h"
#include "train/training_objective.h"
#include "train/training_progress.h"

namespace medusa::train {

const char* objective_name(Objective o) {
    switch (o) {
        case Objective::Heads: return "heads";
        case Objective::Joint: return "joint";
        case Objective::Eagle: return "eagle";
        case Objective::Eagle3: return "eagle3";
    }
    return "";
}

std::optional<Objective> objective_named(const std::string& name) {
    for (Objective o : {Objective::Heads, Objective::Joint, Objective::Eagle, Objective::Eagle3})
        if (name == objective_name(o)) return o;
    return std::nullopt;
}

void TrainingRun::save_checkpoint(const TrainingObjective& objective, int step) const {
    if (o_.checkpoint_dir.empty()) return;
    commit_checkpoint(o_.checkpoint_dir, [&](const std::string& dir) {
        objective.save(dir, {step, o_.seed, &o_.identity});
    });
}

RunSummary TrainingRun::run(TrainingObjective& objective) {
    const bool resuming = o_.resume && committed_checkpoint(o_.checkpoint_dir);
    const int first_step = objective.start({resuming ? o_.checkpoint_dir : "", &o_.identity, log_}) + 1;
    RunSummary res;
    size_t positions = 0, since_positions = 0;
    int since_log = 0;
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    auto tlog = t0;
    for (int step = first_step; step <= o_.steps; ++step) {
        std::mt19937_64 rng(o_.seed * 0x9E3779B97F4A7C15ull + uint64_t(step));  // the batch depends on (seed, step) only
        const size_t trained = objective.step(step, learning_rate(o_, step), rng);
        positions += trained, since_positions += trained;
        ++since_log;
        ++res.steps_done;
        if (log_ && (step % o_.log_every == 0 || step == o_.steps)) {
            const auto now = clock::now();
            const double dt = std::chrono::duration<double>(now - tlog).count();
            log_("step " + std::to_string(step) + "/" + std::to_string(o_.steps) + "  " + objective.progress(since_log) +
                 "  " + fmt("%.0f", double(since_positions) / std::max(dt, 1e-9)) + " " + objective.speed_unit());
            since_log = 0, since_positions = 0;
            tlog = now;
        }
        const CheckpointAfter c = checkpoint_after(o_, step);
        if (c.save) save_checkpoint(objective, step);
        if (c.stop) break;
    }
    res.wall_s = std::chrono::duration<double>(clock::now() - t0).count();
    res.positions_per_s = double(positions) / std::max(res.wall_s, 1e-9);
    return res;
}

}  // namespace medusa::train
