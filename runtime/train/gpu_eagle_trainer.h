// EAGLE layer training on the GPU: the layer's parameters, gradients and AdamW moments live in
// flat device buffers (train/eagle_flat_params.h); one recorded command buffer runs the forward
// over a batch of teacher-forced sequences, the SmoothL1 + soft cross-entropy loss through the
// target's frozen LM head, the backward, global-norm clipping and AdamW, replayed every step.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "gpu/buffer.h"
#include "gpu/command_sequence.h"
#include "gpu/context.h"
#include "llm/eagle_layer.h"
#include "train/eagle_reference.h"
#include "train/head_reference.h"
#include "train/gpu_eagle_trainer_base.h"

namespace medusa::train {

struct EagleBatchStats {
    double feature_loss = 0, token_loss = 0;  // means over the rows with a target (unweighted)
    int valid = 0;                            // rows with a target
    int top1 = 0;                             // of them, rows where p-hat's top token is p's
    std::vector<int> ranks;                   // per row: rank of p's top token under p-hat (-1: padding)
    double grad_norm = 0;                     // before clipping (training steps only)
};

class GpuEagleTrainer : public GpuEagleTrainerBase<EagleBatch, EagleBatchStats> {
public:
    // lm_head: the target's (vocab, dim) output matrix. Batches hold `sequences` causal runs of
    // `seq_len` rows each.
    GpuEagleTrainer(gpu::Context& ctx, const EagleLayer& init, const std::vector<float>& lm_head, int vocab,
                    int sequences, int seq_len, const EagleLossWeights& weights = {},
                    TrainMatmul matmul = TrainMatmul::Auto);
    ~GpuEagleTrainer() override;

    int rows() const { return rows_; }

    std::vector<float> predicted_features() const;  // f-hat of the last batch, [rows][dim]

private:
    void record(gpu::CommandSequence& seq, bool backward, bool update) override;
    void write_inputs(const EagleBatch& b, const AdamW& opt, int step) override;
    EagleBatchStats read_stats(const EagleBatch& b) const override;

    int vocab_, seq_len_, rows_;
    EagleLossWeights weights_;
    std::unique_ptr<gpu::Buffer> lm_head_;                              // (vocab, dim), frozen
    std::unique_ptr<gpu::Buffer> input_, target_, positions_, row_w_;  // per step, from the host
    std::unique_ptr<gpu::Buffer> stats_;                                // read back
    std::unique_ptr<gpu::Buffer> x_, qkv_, att_, lse_, h_, normed_, rstd_, gu_, a_, out_;
    std::unique_ptr<gpu::Buffer> d_out_, d_qkv_, d_x_;
};

}  // namespace medusa::train
