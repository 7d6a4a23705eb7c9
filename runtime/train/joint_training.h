// The Medusa-2 joint phase over self-distilled text: batches of whole teacher-forced sequences
// (from each sequence's start, so positions and context are the model's own), the loss
// KL(p_base || p_tuned) + lambda sum_k 0.8^k CE_k, AdamW for the adapters at a learning rate well
// below the heads', the same warm-up + cosine schedule for both (a TrainingRun), and a held-out
// report: KL, perplexity of both models, per-head accuracy.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "gpu/command_sequence.h"
#include "gpu/context.h"
#include "llm/medusa_heads.h"
#include "train/backbone_weights.h"
#include "train/head_training.h"
#include "train/joint_reference.h"
#include "train/lora.h"
#include "train/self_distill.h"
#include "train/training_objective.h"

namespace medusa::train {

struct JointOptions {
    TrainOptions schedule;    // steps, warm-up, the heads' peak lr, seed, logging, checkpoints
    float backbone_lr = 1e-4f;  // the adapters' peak learning rate
    float lambda = 1.0f;        // weight of the heads' loss
    LoraConfig lora;
    int sequences = 2;          // per batch
    int seq_len = 256;          // rows per sequence
};

// Rows of sequences `seqs` of `data` from their start (padding past a sequence's end): every row
// weighs 1/rows in the KL term; head k's target at position p is token p + k + 2, weighted
// lambda 0.8^k / (rows with a target).
JointBatch make_joint_batch(const DistillData& data, const std::vector<int>& seqs, int seq_len, int heads,
                            float lambda);

struct JointReport {
    double kl = 0;                     // nats/token, KL(p_base || p_tuned)
    double ppl_base = 0, ppl_tuned = 0;  // on the text's own next tokens
    double agree = 0;                  // share of rows whose top token is the base's
    std::vector<double> head_top1, head_loss;
    size_t tokens = 0;
};

class GpuJointTrainer;
JointReport evaluate_joint(GpuJointTrainer& trainer, const DistillData& data, int sequences, int seq_len, int heads);

// Medusa-2's objective: whole sequences from their start, the heads and the backbone's adapters
// stepped together (the adapters at o.backbone_lr on the same schedule).
class JointObjective : public TrainingObjective {
public:
    // Keeps references to its arguments.
    JointObjective(gpu::Context& ctx, const BackboneWeights& base, const MedusaHeads& heads, const DistillData& data,
                   const JointOptions& o);
    ~JointObjective() override;
    int start(const ResumeFrom& from) override;
    size_t step(int step, float lr, std::mt19937_64& rng) override;
    std::string progress(int steps) override;
    const char* speed_unit() const override { return "tok/s"; }
    void save(const std::string& dir, const CheckpointStamp& stamp) const override;
    MedusaHeads heads() const;  // the current heads
    GpuJointTrainer& trainer() { return *trainer_; }

private:
    gpu::Context& ctx_;
    const BackboneWeights& base_;
    const MedusaHeads& init_;
    const DistillData& data_;
    const JointOptions& o_;
    TrainOptions backbone_;  // the schedule at the adapters' peak learning rate
    std::vector<int> usable_;
    std::unique_ptr<GpuJointTrainer> trainer_;
    AdamW lora_opt_, heads_opt_;
    double kl_ = 0, lora_norm_ = 0;
    std::vector<double> loss_, top1_;
};

struct JointResult {
    std::vector<float> lora;
    MedusaHeads heads;
    int steps_done = 0;
    double wall_s = 0, tokens_per_s = 0;
    JointReport heldout;
    std::vector<gpu::StageTime> stage_times;  // of the last training step
};

// `heads` must hold their own vocabulary projections (copy_shared_classifier). Evaluates on
// `heldout` at the end.
JointResult train_joint(gpu::Context& ctx, const BackboneWeights& base, const MedusaHeads& heads,
                        const DistillData& data, const DistillData& heldout, const JointOptions& o,
                        const LogFn& log = {});

// The same report for the original model (adapters at B = 0) with `heads`: Medusa-1's figures on
// exactly the rows train_joint's report covers.
JointReport evaluate_original(gpu::Context& ctx, const BackboneWeights& base, const MedusaHeads& heads,
                              const DistillData& heldout, const JointOptions& o);

// The adapters as DIR/lora.safetensors (flat, with rank and alpha); false when absent.
void save_lora(const std::string& dir, const std::vector<float>& lora, const LoraConfig& lc);
bool load_lora(const std::string& dir, std::vector<float>& lora, const LoraConfig& lc);

}  // namespace medusa::train
