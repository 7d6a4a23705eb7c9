// EAGLE-3 training with training-time test on the GPU: the layer's parameters, gradients and
// AdamW moments in flat device buffers (train/eagle_flat_params.h); one recorded command buffer
// unrolls the draft layer `steps` times over a batch of sequences (each step reading the one
// before it and attending as train_ttt_attention.comp says), takes each step's cross-entropy
// against the target's distribution over the draft vocabulary, runs the backward through the
// unrolled steps in reverse, then global-norm clipping and AdamW. train/eagle3_reference.h is the
// loss it computes, in plain C++.
#pragma once
#include <memory>
#include <vector>

#include "gpu/buffer.h"
#include "gpu/command_sequence.h"
#include "gpu/context.h"
#include "llm/eagle_layer.h"
#include "train/eagle3_reference.h"
#include "train/head_reference.h"
#include "train/gpu_eagle_trainer_base.h"

namespace medusa::train {

struct Eagle3BatchStats {
    std::vector<double> loss;  // per step: mean cross-entropy over its rows with a target
    std::vector<int> rows;     // per step: rows with a target
    std::vector<int> top1;     // per step: of them, rows where the draft's top token is the target's
    double weighted_loss = 0;  // the loss trained: sum over steps and rows of row_weight * cross-entropy
    double grad_norm = 0;      // before clipping (training steps only)
};

// `steps` copies of one buffer's worth of floats, each starting on a 256-byte boundary (the
// largest storage-buffer offset alignment Vulkan allows), so each can be bound alone.
struct StepSlices {
    std::unique_ptr<gpu::Buffer> buf;
    size_t floats = 0, stride = 0;  // per slice, and between two slices
    StepSlices(gpu::Context& ctx, int steps, size_t floats, gpu::MemoryKind kind);
    gpu::BufferRef at(int k) const { return {*buf, size_t(k) * stride * 4, floats * 4}; }
    uint32_t off(int k) const { return uint32_t(size_t(k) * stride); }  // slice k's first float
    void upload(int k, const float* v) const { buf->upload(v, floats * 4, size_t(k) * stride * 4); }
};

class GpuEagle3Trainer : public GpuEagleTrainerBase<Eagle3Batch, Eagle3BatchStats> {
public:
    // target_head: (draft vocabulary, dim), the target's classifier rows of the layer's draft
    // tokens. Batches hold `sequences` causal runs of `seq_len` rows, unrolled `steps` times.
    GpuEagle3Trainer(gpu::Context& ctx, const EagleLayer& init, const std::vector<float>& target_head, int sequences,
                     int seq_len, int steps, TrainMatmul matmul = TrainMatmul::Auto);
    ~GpuEagle3Trainer() override;

    int rows() const { return rows_; }
    int steps() const { return steps_; }


private:
    struct Recording;  // the shapes and parameter views one recording reads
    void record(gpu::CommandSequence& seq, bool backward, bool update) override;
    // Step k forward: [input_norm(e) ; hidden_norm(h)] through attention and the MLP to h_{k+1}.
    void record_forward(gpu::CommandSequence& s, const Recording& r, int k);
    // Step k's loss on h_{k+1} and, with `backward`, its gradient back to h_{k+1}.
    void record_loss(gpu::CommandSequence& s, const Recording& r, int k, bool backward, bool accumulate);
    // Step k backward, from h_{k+1}'s gradient to h_k's.
    void record_backward(gpu::CommandSequence& s, const Recording& r, int k, bool accumulate);
    void write_inputs(const Eagle3Batch& b, const AdamW& opt, int step) override;
    Eagle3BatchStats read_stats(const Eagle3Batch& b) const override;

    int seq_len_, rows_, steps_;
    std::unique_ptr<gpu::Buffer> target_head_, features_;
    std::unique_ptr<StepSlices> emb_, target_, pos_, row_w_, stats_;  // per step, from the host
    std::unique_ptr<StepSlices> hs_;  // steps + 1: step 0's residual (fc's output), then each step's output
    std::unique_ptr<StepSlices> ne_, re_, nh_, rh_, qkv_, att_, lse_, h_, normed_, rstd_, gu_, a_;
    std::unique_ptr<StepSlices> d_hs_, d_qkv_;
    std::unique_ptr<gpu::Buffer> fn_, rf_, d_fn_, d_ne_, d_nh_;
};

}  // namespace medusa::train
