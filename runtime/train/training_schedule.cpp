#include "train/training_schedule.h"

#include <algorithm>
#include <cmath>

namespace medusa::train {

float learning_rate(const TrainOptions& o, int step) {
    const int warm = std::max(1, int(o.warmup * o.steps));
    if (step <= warm) return o.lr * float(step) / float(warm);
    const double t = double(step - warm) / std::max(1, o.steps - warm);
    const double cosine = 0.5 * (1 + std::cos(M_PI * std::min(1.0, t)));
    return float(o.lr * (o.min_lr_ratio + (1 - o.min_lr_ratio) * cosine));
}

CheckpointAfter checkpoint_after(const TrainOptions& o, int step) {
    CheckpointAfter c;
    c.stop = step == o.stop_at || (o.interrupted && o.interrupted());
    c.save = c.stop || step == o.steps || (o.checkpoint_every > 0 && step % o.checkpoint_every == 0);
    return c;
}

}  // namespace medusa::train
