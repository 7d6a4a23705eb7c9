// A model's trainable parameters as one flat device buffer, with their gradients and AdamW's two
// moments beside it, the step parameters AdamW reads, and the dispatches that measure the
// gradient's global norm, clip it and apply the update. Every GPU trainer holds one.
#pragma once
#include <memory>
#include <span>
#include <vector>

#include "gpu/buffer.h"
#include "gpu/command_sequence.h"
#include "gpu/context.h"
#include "train/head_reference.h"
#include "train/train_kernels.h"

namespace medusa::train {

class OptimizerState {
public:
    enum Which { kParams = 0, kGrads = 1, kFirstMoment = 2, kSecondMoment = 3 };
    // `extra_step_floats`: room after AdamW's 8 step parameters for the trainer's own per-step values.
    OptimizerState(gpu::Context& ctx, const std::vector<float>& initial, size_t extra_step_floats = 0);

    size_t size() const { return n_; }
    const gpu::Buffer& params() const { return *buf_[kParams]; }
    const gpu::Buffer& grads() const { return *buf_[kGrads]; }
    const gpu::Buffer& step_params() const { return *step_params_; }
    std::vector<float> read(Which which) const;
    void write(Which which, const std::vector<float>& v);

    // Uploads the step parameters of step `step` (counting from 1), then `extra`.
    void set_step(const AdamW& opt, int step, std::span<const float> extra = {});
    // Records the gradient norm and, with `update`, clipping + AdamW (after the backward pass).
    void record_update(gpu::CommandSequence& s, const TrainKernels& k, bool update) const;
    double grad_norm() const;  // of the last recorded run, before clipping

    static constexpr size_t kFirstExtra = 8;  // index of the first extra step parameter

private:
    size_t n_;
    std::unique_ptr<gpu::Buffer> buf_[4], step_params_, parts_;
};

}  // namespace medusa::train
