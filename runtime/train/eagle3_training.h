// The EAGLE-3 training loop over self-distilled data (DistillData with the fused layers'
// inputs): the draft vocabulary as the most frequent tokens of the training text, batches of
// whole sequences unrolled for training-time test (train/eagle3_reference.h), AdamW with
// clipping as an objective of a TrainingRun (progress lines with each step's accuracy), its
// checkpoints in the published layout plus the optimizer state.
#pragma once
#include <memory>
#include <random>
#include <vector>

#include "gpu/context.h"
#include "llm/eagle_layer.h"
#include "train/eagle3_reference.h"
#include "train/eagle_training.h"
#include "train/head_training.h"
#include "train/self_distill.h"

namespace medusa::train {

struct DraftVocabulary {
    std::vector<int> tokens;  // target ids, ascending
    double coverage = 0;      // share of the text's tokens they cover
};
// The `size` most frequent tokens of the text (ties to the lower id; tokens never seen fill up to
// `size` by id); size 0: the fewest most frequent tokens that cover 99% of it (at most 32000).
DraftVocabulary choose_draft_vocabulary(const DistillData& data, int vocab, int size = 0);

// The target's greedy token after each position of `data`: its classifier on the hidden states.
std::vector<int> target_top_tokens(const DistillData& data, const EagleTarget& target);

struct Eagle3TrainOptions : EagleSchedule {
    Eagle3TrainOptions() {
        steps = 1000;
        batch = 4;  // sequences per step
        lr = 3e-3f;
        clip = 0.5f;
    }
    int ttt_steps = 7;     // unrolled steps (SafeAILab: 7)
    float decay = 0.8f;    // step k's loss weighs decay^k (SafeAILab: 0.8)
};

// Sequences `seqs` of `data` (-1: an empty one) as causal runs of seq_len rows unrolled `steps`
// times. A row of step k has a target while t_{i+1+k} is in the text and the target's top token
// there is one the draft can emit (`top`, `drafts`: target_top_tokens and the layer's vocabulary).
Eagle3Batch make_eagle3_batch(const DistillData& data, const EagleTarget& target, const EagleLayer& layer,
                              const std::vector<int>& top, const std::vector<int>& seqs, int seq_len, int steps,
                              float decay);

// The target's classifier rows of the layer's draft tokens: what the trainer's loss reads.
std::vector<float> draft_target_head(const EagleTarget& target, const EagleLayer& layer);

// Held-out accuracy of each unrolled step: the share of rows whose draft top token is the
// target's (teacher-forced tokens, the draft's own features), and the mean cross-entropy.
struct Eagle3Evaluation {
    std::vector<double> top1, loss;
    std::vector<int> rows;
};
// `top`: target_top_tokens(data, target), computed once for the evaluations of one text.
Eagle3Evaluation evaluate_eagle3(gpu::Context& ctx, const EagleLayer& layer, const EagleTarget& target,
                                 const DistillData& data, const std::vector<int>& top, int steps,
                                 int sequences_per_batch = 4);

class GpuEagle3Trainer;

// EAGLE-3's objective: whole sequences unrolled for training-time test on the draft vocabulary.
class Eagle3Objective : public EagleObjectiveBase<GpuEagle3Trainer> {
public:
    // `target_config`: what a checkpoint's layer is read with. Keeps references to its arguments.
    Eagle3Objective(gpu::Context& ctx, const EagleLayer& init, const EagleTarget& target,
                    const LlamaConfig& target_config, const DistillData& data, const Eagle3TrainOptions& o);
    ~Eagle3Objective() override;
    size_t step(int step, float lr, std::mt19937_64& rng) override;
    std::string progress(int steps) override;

private:
    std::unique_ptr<GpuEagle3Trainer> make_trainer(const EagleLayer& start) override;

    const Eagle3TrainOptions& o_;
    std::vector<int> top_;  // the target's greedy token after each position
    std::vector<double> hits_, rows_;
    double loss_ = 0, norm_ = 0;
};

// Its positions per second count step-0 positions with a target.
EagleTrainResult train_eagle3(gpu::Context& ctx, const EagleLayer& init, const EagleTarget& target,
                               const LlamaConfig& target_config, const DistillData& data, const Eagle3TrainOptions& o,
                               const LogFn& log = {});

}  // namespace medusa::train
