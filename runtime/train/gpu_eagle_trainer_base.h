// What the EAGLE-1/2 and EAGLE-3 trainers on the GPU share: the layer's parameters, gradients and
// AdamW moments in one OptimizerState (train/eagle_flat_params.h's order), the training kernels,
// the recorded command buffers, and a step or evaluation around each one's batch and statistics.
#pragma once
#include <memory>
#include <vector>

#include "gpu/command_sequence.h"
#include "gpu/context.h"
#include "llm/eagle_layer.h"
#include "train/eagle_flat_params.h"
#include "train/head_reference.h"
#include "train/optimizer_state.h"
#include "train/step_sequences.h"
#include "train/train_kernels.h"

namespace medusa::train {

template <class Batch, class Stats>
class GpuEagleTrainerBase {
public:
    virtual ~GpuEagleTrainerBase() = default;
    // Computes the loss gradient and, when `update`, applies one AdamW step (step counts from 1).
    Stats step(const Batch& b, const AdamW& opt, int step, bool update = true) {
        write_inputs(b, opt, step);
        seqs_->run_step(update);
        Stats s = read_stats(b);
        s.grad_norm = opt_.grad_norm();
        return s;
    }
    // Forward and loss only; parameters and moments are untouched.
    Stats evaluate(const Batch& b) {
        write_inputs(b, AdamW{}, 1);
        seqs_->run_eval();
        return read_stats(b);
    }
    EagleLayer layer() const { return unpack_eagle_layer(flat(0), shape_); }  // current parameters
    EagleLayer gradients() const {                                             // of the last step()
        EagleLayer g = unpack_eagle_layer(flat(1), shape_);
        g.source = "gradient";
        return g;
    }
    // 0 params, 1 grads, 2 first moment, 3 second moment
    std::vector<float> flat(int which) const { return opt_.read(OptimizerState::Which(which)); }
    void set_flat(int which, const std::vector<float>& v) { opt_.write(OptimizerState::Which(which), v); }
    // GPU time per stage of the last training step
    std::vector<gpu::StageTime> stage_times() const { return seqs_->stage_times(); }

protected:
    GpuEagleTrainerBase(gpu::Context& ctx, const EagleLayer& init, TrainMatmul matmul)
        : shape_(init), k_(ctx, init.head_dim(), matmul), opt_(ctx, pack_eagle_layer(init)) {}
    virtual void write_inputs(const Batch& b, const AdamW& opt, int step) = 0;
    virtual Stats read_stats(const Batch& b) const = 0;
    // The commands of a training step (backward: with gradients; update: and AdamW) or of an
    // evaluation, into `s`.
    virtual void record(gpu::CommandSequence& s, bool backward, bool update) = 0;

    // What both layers' losses and backward passes over `rows` rows use alike: the draft and
    // target logits over `vocab` tokens, and the gradients through the MLP and attention.
    void allocate_shared_scratch(gpu::Context& ctx, size_t rows, size_t vocab) {
        const size_t d = shape_.dim, hid = shape_.hidden_dim;
        auto device = [&](size_t floats) { return gpu::zeroed_floats(ctx, floats, gpu::MemoryKind::Device); };
        logits_ = device(rows * vocab);
        target_logits_ = device(rows * vocab);
        d_a_ = device(rows * hid);
        d_gu_ = device(rows * 2 * hid);
        d_normed_ = device(rows * d);
        d_h_ = device(rows * d);
        d_att_ = device(rows * d);
    }
    // Records the step's and the evaluation's commands, once every buffer they name exists; a
    // trainer resets seqs_ first in its destructor, before those buffers go.
    void record_sequences(gpu::Context& ctx) {
        seqs_ = std::make_unique<StepSequences>(ctx, /*timed=*/true,
                                                [this](gpu::CommandSequence& s, bool backward, bool update) {
                                                    record(s, backward, update);
                                                });
    }

    EagleLayer shape_;  // sizes and settings (parameters live on the GPU)
    TrainKernels k_;
    OptimizerState opt_;
    std::unique_ptr<gpu::Buffer> logits_, target_logits_, d_a_, d_gu_, d_normed_, d_h_, d_att_;
    std::unique_ptr<StepSequences> seqs_;
};

}  // namespace medusa::train
