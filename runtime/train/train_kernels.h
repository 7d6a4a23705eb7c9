// The reusable training pieces as GPU kernels, each recorded as dispatches into a command
// sequence: linear layers (forward, input and weight gradients through train_matmul, the bias),
// RMSNorm (of whole rows or of the heads in them), RoPE (partial, scaled, with per-pair factors),
// causal grouped-query attention (scaled, windowed), SwiGLU or GeGLU, SmoothL1, soft-target
// cross-entropy, axpy, and
// global-norm clipping + AdamW. Trainers (the EAGLE layer, Medusa-2's backbone) compose them.
// Matrices are row-major floats addressed by element offsets into their buffers; a weight W of
// a linear layer is (out, in), as in the model files.
#pragma once
#include <memory>
#include <string>

#include "gpu/buffer.h"
#include "gpu/command_sequence.h"
#include "gpu/context.h"
#include "gpu/kernel.h"
#include "layouts/push_constants.h"

namespace medusa::train {

// train_matmul.comp's GEMMs: TILED (shared memory: GPUs), DIRECT and QUAD (barrier-free: CPU
// drivers; QUAD reads four floats at a time and runs DIRECT where the shapes do not allow that).
// Auto: QUAD on CPU drivers, TILED elsewhere.
enum class TrainMatmul { Auto, Tiled, Direct, Quad };

// A matrix in a buffer: its first element, and floats between two rows.
struct Mat {
    const gpu::Buffer& buf;
    uint32_t off = 0;
    uint32_t stride = 0;
};

class TrainKernels {
public:
    // head_dim: the attention kernels' head size (a specialization constant, a multiple of 4; 0:
    // no attention).
    TrainKernels(gpu::Context& ctx, int head_dim, TrainMatmul matmul = TrainMatmul::Auto);
    ~TrainKernels();

    // The general GEMM: C(m, n) (+)= sum_k A(m, k) B(k, n), operands addressed by element offset
    // and row and column strides (train_matmul.comp).
    void matmul(gpu::CommandSequence& s, const gpu::Buffer& a, const gpu::Buffer& b, const gpu::Buffer& c,
                const layout::TrainMatmulPush& p) const;

    // Y (rows, out) (+)= X (rows, in) W^T.
    void linear(gpu::CommandSequence& s, Mat x, Mat w, Mat y, uint32_t rows, uint32_t in, uint32_t out,
                bool accumulate = false) const;
    // dX (rows, in) (+)= dY (rows, out) W.
    void linear_dx(gpu::CommandSequence& s, Mat dy, Mat w, Mat dx, uint32_t rows, uint32_t in, uint32_t out,
                   bool accumulate = false) const;
    // dW (out, in) (+)= dY^T X.
    void linear_dw(gpu::CommandSequence& s, Mat dy, Mat x, Mat dw, uint32_t rows, uint32_t in, uint32_t out,
                   bool accumulate = false) const;
    // Y += b (b at bias_off of `params`); db (+)= column sums of dY.
    void bias(gpu::CommandSequence& s, const gpu::Buffer& y, const gpu::Buffer& params, const layout::TrainBiasPush& p) const;
    void bias_grad(gpu::CommandSequence& s, const gpu::Buffer& dy, const gpu::Buffer& grads,
                   const layout::TrainBiasPush& p) const;
    // Y = rmsnorm(X) (gain at gain_off of params), r per row; dX (+)= ...; d(gain) (+)= ... into grads.
    void rmsnorm(gpu::CommandSequence& s, gpu::BufferRef x, gpu::BufferRef y, gpu::BufferRef r,
                 gpu::BufferRef params, const layout::TrainRmsnormPush& p) const;
    void rmsnorm_dx(gpu::CommandSequence& s, gpu::BufferRef x, gpu::BufferRef dy, gpu::BufferRef r,
                    gpu::BufferRef params, gpu::BufferRef dx, const layout::TrainRmsnormPush& p) const;
    void rmsnorm_dgain(gpu::CommandSequence& s, gpu::BufferRef x, gpu::BufferRef dy, gpu::BufferRef r,
                       gpu::BufferRef grads, const layout::TrainRmsnormPush& p) const;
    // In place; direction -1 is the backward. `factors` holds the per-pair frequency divisors at
    // p.factor_off when p.has_factors (none: positions is bound in its place and not read).
    void rope(gpu::CommandSequence& s, gpu::BufferRef x, gpu::BufferRef positions,
              const layout::TrainRopePush& p) const;
    void rope(gpu::CommandSequence& s, gpu::BufferRef x, gpu::BufferRef positions, gpu::BufferRef factors,
              const layout::TrainRopePush& p) const;
    void attention(gpu::CommandSequence& s, const gpu::Buffer& qkv, const gpu::Buffer& o, const gpu::Buffer& lse,
                   const layout::TrainAttentionPush& p) const;
    // dQKV (overwritten) from dO, with the forward's O and log-sum-exp.
    void attention_backward(gpu::CommandSequence& s, const gpu::Buffer& qkv, const gpu::Buffer& o,
                            const gpu::Buffer& lse, const gpu::Buffer& d_o, const gpu::Buffer& d_qkv,
                            const layout::TrainAttentionPush& p) const;
    // EAGLE-3's training-time-test attention of step p.step (train_ttt_attention.comp): QKV and
    // dQKV hold every step; O, LSE and dO are the step's.
    void ttt_attention(gpu::CommandSequence& s, gpu::BufferRef qkv, gpu::BufferRef o, gpu::BufferRef lse,
                       const layout::TrainTttAttentionPush& p) const;
    void ttt_attention_backward(gpu::CommandSequence& s, gpu::BufferRef qkv, gpu::BufferRef o, gpu::BufferRef lse,
                                gpu::BufferRef d_o, gpu::BufferRef d_qkv, const layout::TrainTttAttentionPush& p) const;
    // A = act(gate) * up: SiLU, or GELU's tanh form with p.gelu.
    void swiglu(gpu::CommandSequence& s, gpu::BufferRef gu, gpu::BufferRef a,
                const layout::TrainSwigluPush& p) const;
    void swiglu_backward(gpu::CommandSequence& s, gpu::BufferRef gu, gpu::BufferRef da,
                         gpu::BufferRef d_gu, const layout::TrainSwigluPush& p) const;
    void smooth_l1(gpu::CommandSequence& s, const gpu::Buffer& pred, const gpu::Buffer& target,
                   const gpu::Buffer& row_w, const gpu::Buffer& d_pred, const gpu::Buffer& stats,
                   const layout::TrainSmoothL1Push& p) const;
    // Logits become their gradient.
    void soft_cross_entropy(gpu::CommandSequence& s, gpu::BufferRef logits, gpu::BufferRef target_logits,
                            gpu::BufferRef row_w, gpu::BufferRef stats, uint32_t rows,
                            const layout::TrainSoftCePush& p) const;
    // Y[y_off..] = beta Y + alpha X[x_off..] over n floats (train_axpy.comp).
    void axpy(gpu::CommandSequence& s, const gpu::Buffer& x, const gpu::Buffer& y, const layout::TrainAxpyPush& p) const;
    // Sum of squares of the n gradients into kGradParts partial sums.
    void grad_norm(gpu::CommandSequence& s, const gpu::Buffer& grads, const gpu::Buffer& parts, uint32_t n) const;
    // AdamW of n parameters, the gradient scaled to the clipping norm; step parameters: lr,
    // 1-beta1^t, 1-beta2^t, beta1, beta2, eps, weight decay, clip (train/head_reference.h AdamW).
    void adamw(gpu::CommandSequence& s, const gpu::Buffer& params, const gpu::Buffer& grads, const gpu::Buffer& m,
               const gpu::Buffer& v, const gpu::Buffer& parts, const gpu::Buffer& step_params, uint32_t n) const;

    static constexpr uint32_t kGradParts = 256;

private:
    std::unique_ptr<gpu::Kernel> matmul_, matmul_quad_, bias_fwd_, bias_bwd_, norm_fwd_, norm_bwd_, norm_gain_, rope_, att_fwd_,
        att_bwd_q_, att_bwd_kv_, ttt_fwd_, ttt_bwd_q_, ttt_bwd_kv_, swiglu_fwd_, swiglu_bwd_, smooth_l1_, soft_ce_, grad_norm_, adamw_, axpy_;
};

}  // namespace medusa::train
