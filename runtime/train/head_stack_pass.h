// The K Medusa heads' forward, softmax cross-entropy and backward over a batch of hidden states
// held in a device buffer, recorded into a command sequence. Medusa-1 training (GpuHeadTrainer)
// and Medusa-2's joint training share it; the joint trainer also takes the gradient with respect
// to the hidden states, through which the heads' loss reaches the backbone.
#pragma once
#include <memory>
#include <vector>

#include "gpu/buffer.h"
#include "gpu/command_sequence.h"
#include "gpu/context.h"
#include "gpu/kernel.h"
#include "llm/medusa_heads.h"
#include "train/optimizer_state.h"
#include "train/train_kernels.h"

namespace medusa::train {

// The heads' parameters in flat order: per head, each layer's w1 and b1, then w2.
std::vector<float> pack_heads(const MedusaHeads& heads);
std::vector<MedusaHead> unpack_heads(const std::vector<float>& flat, int K, int layers, int dim, int vocab);

// Where the heads' loss scales sit in an optimizer's step parameters: after AdamW's, one a head.
constexpr uint32_t kHeadLossScales = OptimizerState::kFirstExtra;

class HeadStackPass {
public:
    HeadStackPass(gpu::Context& ctx, int heads, int dim, int vocab, int layers, int rows);
    ~HeadStackPass();

    size_t head_size() const { return head_size_; }
    size_t size() const { return head_size_ * k_; }  // floats of all heads' parameters

    // h: [rows][dim]; targets: [K][rows] ints (< 0: none); stats: [K][rows][2] (loss, rank);
    // head k's loss scale is step_params[scale_index + k]. With `backward`, the parameter
    // gradients are written into `grads` and, when dh is given, d(loss)/dh overwrites dh.
    void record(gpu::CommandSequence& seq, const TrainKernels& kernels, const gpu::Buffer& params,
                const gpu::Buffer& grads, const gpu::Buffer& step_params, uint32_t scale_index, const gpu::Buffer& h,
                const gpu::Buffer& targets, const gpu::Buffer& stats, bool backward,
                const gpu::Buffer* dh = nullptr) const;

private:
    size_t w1_off(int k, int l) const { return head_off(k) + size_t(l) * (dim_ * dim_ + dim_); }
    size_t b1_off(int k, int l) const { return w1_off(k, l) + size_t(dim_) * dim_; }
    size_t w2_off(int k) const { return head_off(k) + size_t(layers_) * (dim_ * dim_ + dim_); }
    size_t head_off(int k) const { return size_t(k) * head_size_; }

    int k_, dim_, vocab_, layers_, rows_;
    size_t head_size_;
    std::unique_ptr<gpu::Buffer> logits_, dx_, dz_;
    std::vector<std::unique_ptr<gpu::Buffer>> z_, x_;  // per head and block: pre-activation, block output
    std::unique_ptr<gpu::Kernel> res_fwd_, res_bwd_, ce_;
};

}  // namespace medusa::train
