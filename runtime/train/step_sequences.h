// The three command buffers every GPU trainer records once and replays: a training step (forward,
// backward, clipping and AdamW), the gradients alone, and the forward and loss alone.
#pragma once
#include <functional>
#include <vector>

#include "gpu/command_sequence.h"
#include "gpu/context.h"

namespace medusa::train {

class StepSequences {
public:
    using Record = std::function<void(gpu::CommandSequence& s, bool backward, bool update)>;
    // `timed`: the training step keeps GPU time per stage.
    StepSequences(gpu::Context& ctx, bool timed, const Record& record) : train_(ctx, timed), grad_(ctx), eval_(ctx) {
        record(train_, true, true);
        record(grad_, true, false);
        record(eval_, false, false);
    }
    void run_step(bool update) { (update ? train_ : grad_).run(); }
    void run_eval() { eval_.run(); }
    std::vector<gpu::StageTime> stage_times() const { return train_.stage_times(); }

private:
    gpu::CommandSequence train_, grad_, eval_;
};

}  // namespace medusa::train
