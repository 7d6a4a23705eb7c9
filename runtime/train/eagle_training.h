// The EAGLE training loop over self-distilled data: each step a batch of whole sequences,
// teacher-forced (row i reads the target's f_i and the token t_{i+1}, and learns f_{i+1} and the
// target's distribution of t_{i+2}), optional uniform noise on the input features as EAGLE adds,
// AdamW (0.9, 0.95) with global-norm clipping at 0.5, as an objective of a TrainingRun; its
// checkpoints are EAGLE's layout plus the optimizer state.
#pragma once
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gpu/command_sequence.h"
#include "gpu/context.h"
#include "llm/eagle_layer.h"
#include "llm/eagle_layer_io.h"
#include "model/model_file.h"
#include "train/eagle_reference.h"
#include "train/head_training.h"
#include "train/self_distill.h"
#include "train/training_objective.h"

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

// What both EAGLE objectives' options add to the schedule: AdamW's betas and the sequences'
// length. `batch` counts sequences per step; the rest of TrainOptions as for Medusa heads.
struct EagleSchedule : TrainOptions {
    float beta1 = 0.9f, beta2 = 0.95f;
    int seq_len = 0;  // rows per sequence; 0: the data's longest sequence
};

struct EagleTrainOptions : EagleSchedule {
    EagleTrainOptions() {
        steps = 2000;
        batch = 8;
        lr = 3e-3f;
        clip = 0.5f;
    }
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

// What EAGLE-1/2's and EAGLE-3's objectives share: batches of whole sequences (o.batch of
// o.seq_len rows, 0: the longest), AdamW with their betas, a checkpoint of the layer in EAGLE's
// layout and its moments, and the result.
template <class Trainer>
class EagleObjectiveBase : public TrainingObjective {
public:
    ~EagleObjectiveBase() override;
    int start(const ResumeFrom& from) override;
    const char* speed_unit() const override { return "positions/s"; }
    void save(const std::string& dir, const CheckpointStamp& stamp) const override;
    EagleTrainResult result(const RunSummary& run) const;

protected:
    // `config`: what a checkpoint's layer is read with. Keeps references to its arguments.
    EagleObjectiveBase(gpu::Context& ctx, const EagleLayer& init, const EagleTarget& target, const DistillData& data,
                       const LlamaConfig& config, const EagleSchedule& o);
    virtual std::unique_ptr<Trainer> make_trainer(const EagleLayer& start) = 0;
    void draw_sequences(std::mt19937_64& rng);  // into seqs_

    gpu::Context& ctx_;
    const EagleLayer& init_;
    const EagleTarget& target_;
    const DistillData& data_;
    LlamaConfig config_;
    int seq_len_;
    std::vector<int> seqs_;
    EagleLayer start_;  // what the trainer started from: init_ or the checkpoint's layer
    std::unique_ptr<Trainer> trainer_;
    AdamW opt_;
};

class GpuEagleTrainer;

// EAGLE-1/2's objective: next features and tokens, teacher-forced, with noise on the features.
class EagleObjective : public EagleObjectiveBase<GpuEagleTrainer> {
public:
    EagleObjective(gpu::Context& ctx, const EagleLayer& init, const EagleTarget& target, const DistillData& data,
                   const EagleTrainOptions& o);
    ~EagleObjective() override;
    size_t step(int step, float lr, std::mt19937_64& rng) override;
    std::string progress(int steps) override;

private:
    std::unique_ptr<GpuEagleTrainer> make_trainer(const EagleLayer& start) override;

    const EagleTrainOptions& o_;
    double feature_ = 0, token_ = 0, top1_ = 0, norm_ = 0;
};

EagleTrainResult train_eagle(gpu::Context& ctx, const EagleLayer& init, const EagleTarget& target,
                             const DistillData& data, const EagleTrainOptions& o, const LogFn& log = {});

}  // namespace medusa::train
