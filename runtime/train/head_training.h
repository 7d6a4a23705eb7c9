// The Medusa-1 training loop over self-distilled data: batches of positions, loss
// sum_k 0.8^k CE(head_k(h_t), y_{t+k+2}) (head k guesses k+1 tokens past the model's next one),
// AdamW with linear warm-up and cosine decay, progress lines, resumable checkpoints,
// and per-head accuracy on held-out text.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "gpu/context.h"
#include "llm/medusa_heads.h"
#include "train/head_reference.h"
#include "train/checkpoint_identity.h"
#include "train/self_distill.h"

namespace medusa::train {

struct TrainOptions {
    int steps = 1000;
    int batch = 256;            // positions per step
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

// Head k's target for position p (index into data.tokens), or -1 past its sequence's end.
int head_target(const DistillData& data, const std::vector<int>& seq_of, size_t p, int k);

struct HeadAccuracy {
    std::vector<double> loss, top1, top5;         // per head
    std::vector<std::vector<double>> rank_share;  // per head: share of positions whose target has rank i (i < 10)
    size_t positions = 0;
};

// Forward only, over every position of `data` with a target for head 0.
HeadAccuracy evaluate_heads(gpu::Context& ctx, const MedusaHeads& heads, const DistillData& data, int batch = 256);

struct TrainResult {
    MedusaHeads heads;
    int steps_done = 0;      // this run (fewer than o.steps when resumed)
    double wall_s = 0;
    double positions_per_s = 0;  // training positions per second (each trains all K heads)
};

using LogFn = std::function<void(const std::string&)>;
TrainResult train_heads(gpu::Context& ctx, const MedusaHeads& init, const DistillData& data, const TrainOptions& o,
                        const LogFn& log = {});

}  // namespace medusa::train
