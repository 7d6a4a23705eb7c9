#include "train/head_stack_pass.h"

#include "layouts/push_constants.h"

namespace medusa::train {

namespace {

using MatPush = layout::TrainMatmulPush;
using ResPush = layout::TrainResblockPush;
using CePush = layout::TrainSoftmaxCePush;

}  // namespace

std::vector<float> pack_heads(const MedusaHeads& heads) {
    std::vector<float> p;
    for (const MedusaHead& h : heads.heads) {
        for (size_t l = 0; l < h.w1.size(); ++l) {
            p.insert(p.end(), h.w1[l].begin(), h.w1[l].end());
            p.insert(p.end(), h.b1[l].begin(), h.b1[l].end());
        }
        p.insert(p.end(), h.w2.begin(), h.w2.end());
    }
    return p;
}

std::vector<MedusaHead> unpack_heads(const std::vector<float>& p, int K, int L, int D, int V) {
    std::vector<MedusaHead> heads(K);
    size_t at = 0;
    for (auto& h : heads) {
        for (int l = 0; l < L; ++l) {
            h.w1.emplace_back(p.begin() + at, p.begin() + at + size_t(D) * D);
            at += size_t(D) * D;
            h.b1.emplace_back(p.begin() + at, p.begin() + at + D);
            at += D;
        }
        h.w2.assign(p.begin() + at, p.begin() + at + size_t(V) * D);
        at += size_t(V) * D;
    }
    return heads;
}

HeadStackPass::HeadStackPass(gpu::Context& ctx, int heads, int dim, int vocab, int layers, int rows)
    : k_(heads), dim_(dim), vocab_(vocab), layers_(layers), rows_(rows) {
    head_size_ = size_t(layers_) * (dim_ * dim_ + dim_) + size_t(vocab_) * dim_;
    logits_ = gpu::zeroed_floats(ctx, size_t(rows_) * vocab_);
    dx_ = gpu::zeroed_floats(ctx, size_t(rows_) * dim_);
    dz_ = gpu::zeroed_floats(ctx, size_t(rows_) * dim_);
    for (int i = 0; i < k_ * layers_; ++i) {
        z_.push_back(gpu::zeroed_floats(ctx, size_t(rows_) * dim_));
        x_.push_back(gpu::zeroed_floats(ctx, size_t(rows_) * dim_));
    }
    res_fwd_ = std::make_unique<gpu::Kernel>(ctx, gpu::Shader::train_resblock_fwd, 4, sizeof(ResPush));
    res_bwd_ = std::make_unique<gpu::Kernel>(ctx, gpu::Shader::train_resblock_bwd, 4, sizeof(ResPush));
    ce_ = std::make_unique<gpu::Kernel>(ctx, gpu::Shader::train_softmax_ce, 4, sizeof(CePush));
}

HeadStackPass::~HeadStackPass() = default;

void HeadStackPass::record(gpu::CommandSequence& seq, const TrainKernels& kernels, const gpu::Buffer& params,
                           const gpu::Buffer& grads, const gpu::Buffer& step_params, uint32_t scale_index,
                           const gpu::Buffer& h, const gpu::Buffer& targets, const gpu::Buffer& stats, bool backward,
                           const gpu::Buffer* dh) const {
    const uint32_t D = dim_, V = vocab_, R = rows_;
    // C(m,n) (+)= sum_k A(m,k) B(k,n) with element offsets and strides.
    auto mm = [&](const gpu::Buffer& a, MatPush p, const gpu::Buffer& b, const gpu::Buffer& c) {
        kernels.matmul(seq, a, b, c, p);
    };
    for (int k = 0; k < k_; ++k) {
        const gpu::Buffer* xin = &h;
        for (int l = 0; l < layers_; ++l) {
            const gpu::Buffer& z = *z_[k * layers_ + l];
            const gpu::Buffer& y = *x_[k * layers_ + l];
            mm(*xin, {R, D, D, 0, D, 1, uint32_t(w1_off(k, l)), 1, D, 0, D, 0}, params, z);  // Z = X W1^T
            seq.dispatch_over(*res_fwd_, {z, *xin, y, params}, ResPush{D, R, uint32_t(b1_off(k, l))}, D);
            xin = &y;
        }
        mm(*xin, {R, V, D, 0, D, 1, uint32_t(w2_off(k)), 1, D, 0, V, 0}, params, *logits_);  // logits = X W2^T
        seq.dispatch(*ce_, {*logits_, targets, stats, step_params},
                     CePush{V, uint32_t(k) * R, uint32_t(k) * R * 2, scale_index + uint32_t(k)}, R);
        if (!backward) continue;
        // dW2 = dL^T X_L, dX_L = dL W2
        mm(*logits_, {V, D, R, 0, 1, V, 0, D, 1, uint32_t(w2_off(k)), D, 0}, *xin, grads);
        mm(*logits_, {R, D, V, 0, V, 1, uint32_t(w2_off(k)), D, 1, 0, D, 0}, params, *dx_);
        for (int l = layers_ - 1; l >= 0; --l) {
            const gpu::Buffer& z = *z_[k * layers_ + l];
            const gpu::Buffer& in = l == 0 ? h : *x_[k * layers_ + l - 1];
            seq.dispatch_over(*res_bwd_, {z, *dx_, *dz_, grads}, ResPush{D, R, uint32_t(b1_off(k, l))}, D);
            mm(*dz_, {D, D, R, 0, 1, D, 0, D, 1, uint32_t(w1_off(k, l)), D, 0}, in, grads);  // dW1 = dZ^T X
            // dX of the block input = dY (residual, already in dx) + dZ W1
            if (l > 0 || dh) mm(*dz_, {R, D, D, 0, D, 1, uint32_t(w1_off(k, l)), D, 1, 0, D, 1}, params, *dx_);
        }
        // Every head reads the same h: their gradients add up.
        if (dh) kernels.axpy(seq, *dx_, *dh, {R * D, 0, 0, 1.0f, k == 0 ? 0.0f : 1.0f});
    }
}

}  // namespace medusa::train
