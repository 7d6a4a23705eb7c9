#include "train/train_kernels.h"

#include <stdexcept>

namespace medusa::train {

using namespace layout;

namespace {
uint32_t div_up(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

// Whether the QUAD GEMM can read both operands four floats at a time (see train_matmul.comp).
bool quad_fits(const TrainMatmulPush& p) {
    auto four = [](uint32_t v) { return v % 4 == 0; };
    const bool a = (p.a_cs == 1 && four(p.a_rs)) || (p.a_rs == 1 && four(p.a_cs));
    const bool b = (p.b_rs == 1 && four(p.b_cs)) || (p.b_cs == 1 && four(p.b_rs));
    return a && b && four(p.M) && four(p.N) && four(p.K) && four(p.a_off) && four(p.b_off);
}
}  // namespace

TrainKernels::TrainKernels(gpu::Context& ctx, int head_dim, TrainMatmul matmul) {
    if (head_dim < 0 || head_dim % 4 != 0)
        throw std::invalid_argument("training attention needs a head size that is a multiple of 4, not " +
                                    std::to_string(head_dim));
    // CPU drivers run the barrier-free GEMMs faster (QUAD where the shapes allow it, else DIRECT);
    // GPUs the shared-memory one.
    if (matmul == TrainMatmul::Auto)
        matmul = ctx.info().kind == gpu::DeviceKind::Cpu ? TrainMatmul::Quad : TrainMatmul::Tiled;
    using gpu::Shader;
    auto kernel = [&](Shader shader, uint32_t buffers, uint32_t push, std::vector<uint32_t> spec = {}) {
        return std::make_unique<gpu::Kernel>(ctx, shader, buffers, push, spec);
    };
    if (matmul == TrainMatmul::Quad) {
        matmul_quad_ = kernel(Shader::train_matmul_quad, 3, sizeof(TrainMatmulPush));
        matmul = TrainMatmul::Direct;
    }
    const std::vector<uint32_t> hd = {uint32_t(head_dim)};
    matmul_ = kernel(matmul == TrainMatmul::Tiled ? Shader::train_matmul_tiled : Shader::train_matmul_direct, 3,
                     sizeof(TrainMatmulPush));
    bias_fwd_ = kernel(Shader::train_bias_fwd, 2, sizeof(TrainBiasPush));
    bias_bwd_ = kernel(Shader::train_bias_bwd, 2, sizeof(TrainBiasPush));
    norm_fwd_ = kernel(Shader::train_rmsnorm_fwd, 4, sizeof(TrainRmsnormPush));
    norm_bwd_ = kernel(Shader::train_rmsnorm_bwd, 5, sizeof(TrainRmsnormPush));
    norm_gain_ = kernel(Shader::train_rmsnorm_gain, 4, sizeof(TrainRmsnormPush));
    rope_ = kernel(Shader::train_rope, 3, sizeof(TrainRopePush));
    if (head_dim > 0) {
        att_fwd_ = kernel(Shader::train_attention_fwd, 3, sizeof(TrainAttentionPush), hd);
        att_bwd_q_ = kernel(Shader::train_attention_bwd_q, 5, sizeof(TrainAttentionPush), hd);
        att_bwd_kv_ = kernel(Shader::train_attention_bwd_kv, 5, sizeof(TrainAttentionPush), hd);
        ttt_fwd_ = kernel(Shader::train_ttt_attention_fwd, 3, sizeof(TrainTttAttentionPush), hd);
        ttt_bwd_q_ = kernel(Shader::train_ttt_attention_bwd_q, 5, sizeof(TrainTttAttentionPush), hd);
        ttt_bwd_kv_ = kernel(Shader::train_ttt_attention_bwd_kv, 5, sizeof(TrainTttAttentionPush), hd);
    }
    swiglu_fwd_ = kernel(Shader::train_swiglu_fwd, 2, sizeof(TrainSwigluPush));
    swiglu_bwd_ = kernel(Shader::train_swiglu_bwd, 3, sizeof(TrainSwigluPush));
    smooth_l1_ = kernel(Shader::train_smooth_l1, 5, sizeof(TrainSmoothL1Push));
    soft_ce_ = kernel(Shader::train_soft_ce, 4, sizeof(TrainSoftCePush));
    grad_norm_ = kernel(Shader::train_grad_norm, 2, sizeof(TrainGradNormPush));
    adamw_ = kernel(Shader::train_adamw, 6, sizeof(TrainAdamwPush));
    axpy_ = kernel(Shader::train_axpy, 2, sizeof(TrainAxpyPush));
}

TrainKernels::~TrainKernels() = default;

void TrainKernels::matmul(gpu::CommandSequence& s, const gpu::Buffer& a, const gpu::Buffer& b, const gpu::Buffer& c,
                          const TrainMatmulPush& p) const {
    const gpu::Kernel& k = matmul_quad_ && quad_fits(p) ? *matmul_quad_ : *matmul_;
    s.dispatch(k, {a, b, c}, p, div_up(p.N, 64), div_up(p.M, 64));  // a workgroup per 64x64 tile of C
}

// C(m, n) = sum_k A(m, k) B(k, n), operands addressed as (offset, row stride, column stride).
void TrainKernels::linear(gpu::CommandSequence& s, Mat x, Mat w, Mat y, uint32_t rows, uint32_t in, uint32_t out,
                          bool accumulate) const {
    matmul(s, x.buf, w.buf, y.buf,
           {rows, out, in, x.off, x.stride, 1, w.off, 1, w.stride, y.off, y.stride, uint32_t(accumulate)});
}

void TrainKernels::linear_dx(gpu::CommandSequence& s, Mat dy, Mat w, Mat dx, uint32_t rows, uint32_t in, uint32_t out,
                             bool accumulate) const {
    matmul(s, dy.buf, w.buf, dx.buf,
           {rows, in, out, dy.off, dy.stride, 1, w.off, w.stride, 1, dx.off, dx.stride, uint32_t(accumulate)});
}

void TrainKernels::linear_dw(gpu::CommandSequence& s, Mat dy, Mat x, Mat dw, uint32_t rows, uint32_t in, uint32_t out,
                             bool accumulate) const {
    matmul(s, dy.buf, x.buf, dw.buf,
           {out, in, rows, dy.off, 1, dy.stride, x.off, x.stride, 1, dw.off, dw.stride, uint32_t(accumulate)});
}

void TrainKernels::bias(gpu::CommandSequence& s, const gpu::Buffer& y, const gpu::Buffer& params,
                        const TrainBiasPush& p) const {
    s.dispatch_over(*bias_fwd_, {y, params}, p, p.rows * p.dim);
}

void TrainKernels::bias_grad(gpu::CommandSequence& s, const gpu::Buffer& dy, const gpu::Buffer& grads,
                             const TrainBiasPush& p) const {
    s.dispatch_over(*bias_bwd_, {dy, grads}, p, p.dim);
}

void TrainKernels::rmsnorm(gpu::CommandSequence& s, gpu::BufferRef x, gpu::BufferRef y, gpu::BufferRef r,
                           gpu::BufferRef params, const TrainRmsnormPush& p) const {
    s.dispatch_over(*norm_fwd_, {x, y, r, params}, p, p.rows);
}

void TrainKernels::rmsnorm_dx(gpu::CommandSequence& s, gpu::BufferRef x, gpu::BufferRef dy,
                              gpu::BufferRef r, gpu::BufferRef params, gpu::BufferRef dx,
                              const TrainRmsnormPush& p) const {
    s.dispatch_over(*norm_bwd_, {x, dy, r, params, dx}, p, p.rows);
}

void TrainKernels::rmsnorm_dgain(gpu::CommandSequence& s, gpu::BufferRef x, gpu::BufferRef dy,
                                 gpu::BufferRef r, gpu::BufferRef grads, const TrainRmsnormPush& p) const {
    s.dispatch_over(*norm_gain_, {x, dy, r, grads}, p, p.dim);
}

void TrainKernels::rope(gpu::CommandSequence& s, gpu::BufferRef x, gpu::BufferRef positions,
                        const TrainRopePush& p) const {
    if (p.has_factors) throw std::logic_error("RoPE with per-pair factors needs the buffer that holds them");
    rope(s, x, positions, positions, p);
}

void TrainKernels::rope(gpu::CommandSequence& s, gpu::BufferRef x, gpu::BufferRef positions, gpu::BufferRef factors,
                        const TrainRopePush& p) const {
    s.dispatch_over(*rope_, {x, positions, factors}, p, p.rows * (p.width / 2));
}

void TrainKernels::attention(gpu::CommandSequence& s, const gpu::Buffer& qkv, const gpu::Buffer& o,
                             const gpu::Buffer& lse, const TrainAttentionPush& p) const {
    if (!att_fwd_) throw std::logic_error("TrainKernels built without attention (head size 0)");
    s.dispatch_over(*att_fwd_, {qkv, o, lse}, p, p.rows * p.n_heads);
}

void TrainKernels::attention_backward(gpu::CommandSequence& s, const gpu::Buffer& qkv, const gpu::Buffer& o,
                                      const gpu::Buffer& lse, const gpu::Buffer& d_o, const gpu::Buffer& d_qkv,
                                      const TrainAttentionPush& p) const {
    if (!att_bwd_q_) throw std::logic_error("TrainKernels built without attention (head size 0)");
    s.dispatch_over(*att_bwd_q_, {qkv, o, lse, d_o, d_qkv}, p, p.rows * p.n_heads);
    s.dispatch_over(*att_bwd_kv_, {qkv, o, lse, d_o, d_qkv}, p, p.rows * p.n_kv_heads);
}

void TrainKernels::ttt_attention(gpu::CommandSequence& s, gpu::BufferRef qkv, gpu::BufferRef o, gpu::BufferRef lse,
                                 const TrainTttAttentionPush& p) const {
    if (!ttt_fwd_) throw std::logic_error("TrainKernels built without attention (head size 0)");
    s.dispatch_over(*ttt_fwd_, {qkv, o, lse}, p, p.rows * p.n_heads);
}

void TrainKernels::ttt_attention_backward(gpu::CommandSequence& s, gpu::BufferRef qkv, gpu::BufferRef o,
                                          gpu::BufferRef lse, gpu::BufferRef d_o, gpu::BufferRef d_qkv,
                                          const TrainTttAttentionPush& p) const {
    if (!ttt_bwd_q_) throw std::logic_error("TrainKernels built without attention (head size 0)");
    s.dispatch_over(*ttt_bwd_q_, {qkv, o, lse, d_o, d_qkv}, p, p.rows * p.n_heads);
    s.dispatch_over(*ttt_bwd_kv_, {qkv, o, lse, d_o, d_qkv}, p, p.rows * p.n_kv_heads);
}

void TrainKernels::swiglu(gpu::CommandSequence& s, gpu::BufferRef gu, gpu::BufferRef a,
                          const TrainSwigluPush& p) const {
    s.dispatch_over(*swiglu_fwd_, {gu, a}, p, p.rows * p.hidden);
}

void TrainKernels::swiglu_backward(gpu::CommandSequence& s, gpu::BufferRef gu, gpu::BufferRef da,
                                   gpu::BufferRef d_gu, const TrainSwigluPush& p) const {
    s.dispatch_over(*swiglu_bwd_, {gu, da, d_gu}, p, p.rows * p.hidden);
}

void TrainKernels::smooth_l1(gpu::CommandSequence& s, const gpu::Buffer& pred, const gpu::Buffer& target,
                             const gpu::Buffer& row_w, const gpu::Buffer& d_pred, const gpu::Buffer& stats,
                             const TrainSmoothL1Push& p) const {
    s.dispatch_over(*smooth_l1_, {pred, target, row_w, d_pred, stats}, p, p.rows);
}

void TrainKernels::soft_cross_entropy(gpu::CommandSequence& s, gpu::BufferRef logits,
                                      gpu::BufferRef target_logits, gpu::BufferRef row_w,
                                      gpu::BufferRef stats, uint32_t rows, const TrainSoftCePush& p) const {
    s.dispatch(*soft_ce_, {logits, target_logits, row_w, stats}, p, rows);
}

void TrainKernels::axpy(gpu::CommandSequence& s, const gpu::Buffer& x, const gpu::Buffer& y,
                        const TrainAxpyPush& p) const {
    s.dispatch_over(*axpy_, {x, y}, p, p.n);
}

void TrainKernels::grad_norm(gpu::CommandSequence& s, const gpu::Buffer& grads, const gpu::Buffer& parts,
                             uint32_t n) const {
    s.dispatch(*grad_norm_, {grads, parts}, TrainGradNormPush{n}, kGradParts);
}

void TrainKernels::adamw(gpu::CommandSequence& s, const gpu::Buffer& params, const gpu::Buffer& grads,
                         const gpu::Buffer& m, const gpu::Buffer& v, const gpu::Buffer& parts,
                         const gpu::Buffer& step_params, uint32_t n) const {
    s.dispatch(*adamw_, {params, grads, m, v, parts, step_params}, TrainAdamwPush{n, kGradParts},
               std::min<uint32_t>(div_up(n, 256), 1024));
}

}  // namespace medusa::train
