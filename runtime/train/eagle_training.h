// The EAGLE training loop over self-distilled data: each step a batch of whole sequences,
// teacher-forced (row i reads the target's f_i and the token t_{i+1}, and learns f_{i+1} and the
// target's distribution of t_{i+2}), optional uniform noise on the input features as EAGLE adds,
// AdamW (0.9, 0.95) with global-norm clipping at 0.5, linear warm-up and cosine decay, progress
// lines, resumable checkpoints (EAGLE's layout plus the optimizer state).
#pragma once
#include <algorithm>
#include <chrono>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "gpu/command_sequence.h"
#include "gpu/context.h"
#include "llm/eagle_layer.h"
#include "llm/eagle_layer_io.h"
#include "train/checkpoint_folder.h"
#include "train/training_progress.h"
#include "model/model_file.h"
#include "train/eagle_reference.h"
#include "train/head_training.h"
#include "train/self_distill.h"

namespace medusa::train {

// What the layer borrows from the target model.
struct EagleTarget {
    int dim = 0, vocab = 0;
    std::vector<float> embeddings;  // (vocab, dim)
    std::vector<float> lm_head;     // (vocab, dim): the classifier
    std::vector<float> final_norm;  // (dim): its final RMSNorm's gain
    std::string path;
    static EagleTarget from(const ModelFile& file);
};

// `batch` counts sequences per step; the rest of TrainOptions as for Medusa heads.
struct EagleTrainOptions : TrainOptions {
    EagleTrainOptions() {
        steps = 2000;
        batch = 8;
        lr = 3e-3f;
        clip = 0.5f;
    }
    float beta1 = 0.9f, beta2 = 0.95f;
    int seq_len = 0;      // rows per sequence; 0: the data's longest sequence
    float noise = 0.0f;   // width of the uniform noise on input features: U(-noise/2, noise/2)
    EagleLossWeights loss;
};

// Sequences `seqs` of `data` (-1: an empty one) as causal runs of seq_len rows each: row i holds
// [e(t_{i+1}) ; f_i + noise] -> f_{i+1} while t_{i+1} exists, padding (weight 0) after. Row
// weights are 1 / (rows with a target). Noise is drawn from `rng`.
EagleBatch make_eagle_batch(const DistillData& data, const EagleTarget& target, const std::vector<int>& seqs,
                            int seq_len, float noise, std::mt19937_64& rng);
int longest_sequence(const DistillData& data);

// Teacher-forced loss and depth-1 top-1 over every sequence of `data` (GPU, forward only).
struct EagleTeacherForced {
    double feature_loss = 0, token_loss = 0, top1 = 0;
    size_t positions = 0;
};
EagleTeacherForced evaluate_eagle_teacher_forced(gpu::Context& ctx, const EagleLayer& layer, const EagleTarget& target,
                                                 const DistillData& data, int sequences_per_batch = 8);

struct EagleTrainResult {
    EagleLayer layer;
    int steps_done = 0;          // this run (fewer than o.steps when resumed)
    double wall_s = 0;
    double positions_per_s = 0;  // trained positions (rows with a target) per second
    std::vector<gpu::StageTime> stage_times;  // GPU time per stage of the last step
};

// What both EAGLE loops share (EAGLE-1/2's and EAGLE-3's trainers alike): AdamW from the
// options, a checkpoint of the trainer's layer and moments, and the result at the end.
AdamW eagle_adamw(const TrainOptions& o, float beta1, float beta2);

template <class Trainer>
void save_eagle_checkpoint(const TrainOptions& o, const Trainer& trainer, int step, const std::string& base_model) {
    if (o.checkpoint_dir.empty()) return;
    commit_checkpoint(o.checkpoint_dir, [&](const std::string& dir) {
        save_eagle_layer(trainer.layer(), dir, base_model);
        save_optimizer_checkpoint(dir, {trainer.flat(2), trainer.flat(3), step}, o.seed, o.identity);
    });
}

template <class Trainer>
EagleTrainResult eagle_result(const Trainer& trainer, const std::string& source, int steps_done, size_t positions,
                              std::chrono::steady_clock::time_point t0) {
    EagleTrainResult res;
    res.steps_done = steps_done;
    res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    res.positions_per_s = double(positions) / std::max(res.wall_s, 1e-9);
    res.layer = trainer.layer();
    res.layer.source = source;
    res.stage_times = trainer.stage_times();
    return res;
}

EagleTrainResult train_eagle(gpu::Context& ctx, const EagleLayer& init, const EagleTarget& target,
                             const DistillData& data, const EagleTrainOptions& o, const LogFn& log = {});

}  // namespace medusa::train
