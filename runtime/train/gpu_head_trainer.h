// Medusa-1 head training on the GPU: all K heads' parameters, gradients and AdamW moments live in
// flat device buffers; one recorded command buffer does forward, softmax cross-entropy, backward,
// global-norm clipping and the AdamW update for a batch, and is replayed every step.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "gpu/buffer.h"
#include "gpu/command_sequence.h"
#include "gpu/context.h"
#include "gpu/kernel.h"
#include "llm/medusa_heads.h"
#include "train/head_reference.h"
#include "train/head_stack_pass.h"
#include "train/optimizer_state.h"
#include "train/step_sequences.h"
#include "train/train_kernels.h"

namespace medusa::train {

struct BatchStats {
    std::vector<double> loss;       // per head: mean CE over rows with a target
    std::vector<int> valid, top1, top5;
    std::vector<std::vector<int>> ranks;  // per head, per row (-1: no target)
    double grad_norm = 0;           // before clipping (training steps only)
};

class GpuHeadTrainer {
public:
    // matmul: the GEMM its layers run (TrainMatmul::Auto: the device's best).
    GpuHeadTrainer(gpu::Context& ctx, const MedusaHeads& init, int batch_rows, TrainMatmul matmul = TrainMatmul::Auto);
    ~GpuHeadTrainer();

    int batch_rows() const { return rows_; }
    // h: [rows][dim]; targets: [K][rows] (< 0: none). Computes the loss gradient into the gradient
    // buffer and, when `update`, applies one AdamW step (step counts from 1).
    BatchStats step(const std::vector<float>& h, const std::vector<int>& targets, const AdamW& opt, int step,
                    bool update = true);
    // Forward and loss only (held-out evaluation); the parameters and moments are untouched.
    BatchStats evaluate(const std::vector<float>& h, const std::vector<int>& targets);

    MedusaHeads heads() const;                      // current parameters
    std::vector<MedusaHead> gradients() const;      // of the last step()
    std::vector<float> flat(int which) const;       // 0 params, 1 grads, 2 first moment, 3 second moment
    void set_flat(int which, const std::vector<float>& v);

private:
    void record(gpu::CommandSequence& seq, bool backward, bool update);
    void write_inputs(const std::vector<float>& h, const std::vector<int>& targets, std::vector<float> scales,
                      const AdamW& opt, int step);
    BatchStats read_stats(const std::vector<int>& targets) const;
    MedusaHeads shape_;  // sizes and source of the heads (parameters live on the GPU)
    int k_, dim_, vocab_, layers_, rows_;
    TrainKernels kernels_;
    OptimizerState opt_;  // parameters, gradients, AdamW moments; step parameters, then a loss scale per head
    HeadStackPass pass_;
    std::unique_ptr<gpu::Buffer> h_, targets_, stats_;
    std::unique_ptr<StepSequences> seqs_;
};

}  // namespace medusa::train
