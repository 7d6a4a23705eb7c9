// The Medusa-2 joint phase over self-distilled text: batches of whole teacher-forced sequences
// (from each sequence's start, so positions and context are the model's own), the loss
// KL(p_base || p_tuned) + lambda sum_k 0.8^k CE_k, AdamW for the adapters at a learning rate well
// below the heads', the same warm-up + cosine schedule for both, progress lines, resumable
// checkpoints, and a held-out report: KL, perplexity of both models, per-head accuracy.
#pragma once
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
