#include "train/gpu_head_trainer.h"

#include <cmath>
#include <stdexcept>

#include "layouts/push_constants.h"

namespace medusa::train {

namespace {

using MatPush = layout::TrainMatmulPush;
using ResPush = layout::TrainResblockPush;
using CePush = layout::TrainSoftmaxCePush;
using NormPush = layout::TrainGradNormPush;
using AdamPush = layout::TrainAdamwPush;
constexpr uint32_t kParts = 256;  // workgroups of the gradient-norm pass
constexpr int kScaleIndex = 8;    // step parameters: 8 optimizer values, then one loss scale per head

uint32_t div_up(size_t a, uint32_t b) { return uint32_t((a + b - 1) / b); }

std::unique_ptr<gpu::Buffer> buffer(gpu::Context& ctx, size_t floats, gpu::MemoryKind kind) {
    auto b = std::make_unique<gpu::Buffer>(ctx, std::max<size_t>(floats, 1) * 4, kind);
    b->fill_zero();
    return b;
}

}  // namespace

GpuHeadTrainer::GpuHeadTrainer(gpu::Context& ctx, const MedusaHeads& init, int batch_rows,
                               const std::string& matmul_variant)
    : ctx_(ctx), shape_(init), k_(init.count()), dim_(init.dim), vocab_(init.vocab), layers_(init.layers),
      rows_(batch_rows) {
    if (k_ < 1 || rows_ < 1) throw std::invalid_argument("training needs at least one head and one row");
    for (auto& h : shape_.heads) h = MedusaHead{};  // only the sizes are kept on the CPU
    head_size_ = size_t(layers_) * (dim_ * dim_ + dim_) + size_t(vocab_) * dim_;
    n_params_ = head_size_ * k_;
    using gpu::MemoryKind;
    params_ = buffer(ctx, n_params_, MemoryKind::Device);
    grads_ = buffer(ctx, n_params_, MemoryKind::Device);
    m_ = buffer(ctx, n_params_, MemoryKind::Device);
    v_ = buffer(ctx, n_params_, MemoryKind::Device);
    h_ = buffer(ctx, size_t(rows_) * dim_, MemoryKind::Host);
    targets_ = buffer(ctx, size_t(k_) * rows_, MemoryKind::Host);
    step_params_ = buffer(ctx, kScaleIndex + k_, MemoryKind::Host);
    stats_ = buffer(ctx, size_t(k_) * rows_ * 2, MemoryKind::Host);
    parts_ = buffer(ctx, kParts, MemoryKind::Host);
    logits_ = buffer(ctx, size_t(rows_) * vocab_, MemoryKind::Device);
    dx_ = buffer(ctx, size_t(rows_) * dim_, MemoryKind::Device);
    dz_ = buffer(ctx, size_t(rows_) * dim_, MemoryKind::Device);
    for (int i = 0; i < k_ * layers_; ++i) {
        z_.push_back(buffer(ctx, size_t(rows_) * dim_, MemoryKind::Device));
        x_.push_back(buffer(ctx, size_t(rows_) * dim_, MemoryKind::Device));
    }
    std::vector<float> p(n_params_);
    for (int k = 0; k < k_; ++k) {
        const MedusaHead& h = init.heads[k];
        for (int l = 0; l < layers_; ++l) {
            std::copy(h.w1[l].begin(), h.w1[l].end(), p.begin() + w1_off(k, l));
            std::copy(h.b1[l].begin(), h.b1[l].end(), p.begin() + b1_off(k, l));
        }
        std::copy(h.w2.begin(), h.w2.end(), p.begin() + w2_off(k));
    }
    set_flat(0, p);
    // CPU drivers run the barrier-free GEMM faster; GPUs the shared-memory one.
    const std::string variant = !matmul_variant.empty() ? matmul_variant : ctx.info().type == "cpu" ? "direct" : "tiled";
    matmul_ = std::make_unique<gpu::Kernel>(ctx, "train_matmul_" + variant, 3, sizeof(MatPush));
    res_fwd_ = std::make_unique<gpu::Kernel>(ctx, "train_resblock_fwd", 4, sizeof(ResPush));
    res_bwd_ = std::make_unique<gpu::Kernel>(ctx, "train_resblock_bwd", 4, sizeof(ResPush));
    ce_ = std::make_unique<gpu::Kernel>(ctx, "train_softmax_ce", 4, sizeof(CePush));
    norm_ = std::make_unique<gpu::Kernel>(ctx, "train_grad_norm", 2, sizeof(NormPush));
    adamw_ = std::make_unique<gpu::Kernel>(ctx, "train_adamw", 6, sizeof(AdamPush));
    train_seq_ = std::make_unique<gpu::CommandSequence>(ctx);
    grad_seq_ = std::make_unique<gpu::CommandSequence>(ctx);
    eval_seq_ = std::make_unique<gpu::CommandSequence>(ctx);
    record(*train_seq_, true, true);
    record(*grad_seq_, true, false);
    record(*eval_seq_, false, false);
}

GpuHeadTrainer::~GpuHeadTrainer() = default;

void GpuHeadTrainer::record(gpu::CommandSequence& seq, bool backward, bool update) {
    const uint32_t D = dim_, V = vocab_, R = rows_;
    // C(m,n) (+)= sum_k A(m,k) B(k,n) with element offsets and strides.
    auto mm = [&](const gpu::Buffer& a, MatPush p, const gpu::Buffer& b, const gpu::Buffer& c) {
        seq.dispatch(*matmul_, {a, b, c}, p, div_up(p.N, 64), div_up(p.M, 64));
    };
    seq.begin();
    for (int k = 0; k < k_; ++k) {
        const gpu::Buffer* xin = h_.get();
        for (int l = 0; l < layers_; ++l) {
            const gpu::Buffer& z = *z_[k * layers_ + l];
            const gpu::Buffer& y = *x_[k * layers_ + l];
            mm(*xin, {R, D, D, 0, D, 1, uint32_t(w1_off(k, l)), 1, D, 0, D, 0}, *params_, z);  // Z = X W1^T
            seq.dispatch(*res_fwd_, {z, *xin, y, *params_}, ResPush{D, R, uint32_t(b1_off(k, l))}, div_up(D, 64));
            xin = &y;
        }
        mm(*xin, {R, V, D, 0, D, 1, uint32_t(w2_off(k)), 1, D, 0, V, 0}, *params_, *logits_);  // logits = X W2^T
        seq.dispatch(*ce_, {*logits_, *targets_, *stats_, *step_params_},
                     CePush{V, uint32_t(k) * R, uint32_t(k) * R * 2, uint32_t(kScaleIndex + k)}, R);
        if (!backward) continue;
        // dW2 = dL^T X_L, dX_L = dL W2
        mm(*logits_, {V, D, R, 0, 1, V, 0, D, 1, uint32_t(w2_off(k)), D, 0}, *xin, *grads_);
        mm(*logits_, {R, D, V, 0, V, 1, uint32_t(w2_off(k)), D, 1, 0, D, 0}, *params_, *dx_);
        for (int l = layers_ - 1; l >= 0; --l) {
            const gpu::Buffer& z = *z_[k * layers_ + l];
            const gpu::Buffer& in = l == 0 ? *h_ : *x_[k * layers_ + l - 1];
            seq.dispatch(*res_bwd_, {z, *dx_, *dz_, *grads_}, ResPush{D, R, uint32_t(b1_off(k, l))}, div_up(D, 64));
            mm(*dz_, {D, D, R, 0, 1, D, 0, D, 1, uint32_t(w1_off(k, l)), D, 0}, in, *grads_);  // dW1 = dZ^T X
            // dX of the block input = dY (residual, already in dx) + dZ W1
            if (l > 0) mm(*dz_, {R, D, D, 0, D, 1, uint32_t(w1_off(k, l)), D, 1, 0, D, 1}, *params_, *dx_);
        }
    }
    if (backward) {
        seq.dispatch(*norm_, {*grads_, *parts_}, NormPush{uint32_t(n_params_)}, kParts);
        if (update)
            seq.dispatch(*adamw_, {*params_, *grads_, *m_, *v_, *parts_, *step_params_},
                         AdamPush{uint32_t(n_params_), kParts}, std::min<uint32_t>(div_up(n_params_, 256), 1024));
    }
    seq.end();
}

void GpuHeadTrainer::write_inputs(const std::vector<float>& h, const std::vector<int>& targets,
                                  std::vector<float> scales, const AdamW& opt, int step) {
    if (h.size() > size_t(rows_) * dim_ || h.size() % dim_ != 0) throw std::invalid_argument("batch too large");
    const size_t rows = h.size() / dim_;
    if (targets.size() != rows * k_) throw std::invalid_argument("batch needs one target per head and row");
    std::vector<float> hp(size_t(rows_) * dim_, 0.0f);
    std::copy(h.begin(), h.end(), hp.begin());
    std::vector<int> tp(size_t(k_) * rows_, -1);
    for (int k = 0; k < k_; ++k)
        for (size_t r = 0; r < rows; ++r) tp[k * rows_ + r] = targets[k * rows + r];
    h_->upload(hp.data(), hp.size() * 4);
    targets_->upload(tp.data(), tp.size() * 4);
    std::vector<float> sp = {opt.lr,
                             1.0f - std::pow(opt.beta1, float(std::max(step, 1))),
                             1.0f - std::pow(opt.beta2, float(std::max(step, 1))),
                             opt.beta1,
                             opt.beta2,
                             opt.eps,
                             opt.weight_decay,
                             opt.clip};
    sp.insert(sp.end(), scales.begin(), scales.end());
    step_params_->upload(sp.data(), sp.size() * 4);
}

BatchStats GpuHeadTrainer::step(const std::vector<float>& h, const std::vector<int>& targets, const AdamW& opt,
                                int step, bool update) {
    const size_t rows = h.size() / dim_;
    std::vector<float> scales(k_);
    for (int k = 0; k < k_; ++k) {
        int valid = 0;
        for (size_t r = 0; r < rows; ++r) valid += targets[k * rows + r] >= 0;
        scales[k] = valid ? head_weight(k) / float(valid) : 0.0f;
    }
    write_inputs(h, targets, scales, opt, step);
    (update ? train_seq_ : grad_seq_)->run();
    BatchStats s = read_stats(targets);
    std::vector<float> parts(kParts);
    parts_->download(parts.data(), parts.size() * 4);
    double ss = 0;
    for (float x : parts) ss += x;
    s.grad_norm = std::sqrt(ss);
    return s;
}

BatchStats GpuHeadTrainer::evaluate(const std::vector<float>& h, const std::vector<int>& targets) {
    write_inputs(h, targets, std::vector<float>(k_, 0.0f), AdamW{}, 1);
    eval_seq_->run();
    return read_stats(targets);
}

BatchStats GpuHeadTrainer::read_stats(const std::vector<int>& targets) const {
    const size_t rows = targets.size() / k_;
    std::vector<float> st(size_t(k_) * rows_ * 2);
    stats_->download(st.data(), st.size() * 4);
    BatchStats s;
    for (int k = 0; k < k_; ++k) {
        double loss = 0;
        int valid = 0, top1 = 0, top5 = 0;
        std::vector<int> ranks(rows, -1);
        for (size_t r = 0; r < rows; ++r) {
            if (targets[k * rows + r] < 0) continue;
            const float* e = &st[(k * rows_ + r) * 2];
            const int rank = int(e[1]);
            loss += e[0];
            valid++;
            top1 += rank == 0;
            top5 += rank < 5;
            ranks[r] = rank;
        }
        s.loss.push_back(valid ? loss / valid : 0.0);
        s.valid.push_back(valid);
        s.top1.push_back(top1);
        s.top5.push_back(top5);
        s.ranks.push_back(std::move(ranks));
    }
    return s;
}

std::vector<float> GpuHeadTrainer::flat(int which) const {
    const gpu::Buffer* b[] = {params_.get(), grads_.get(), m_.get(), v_.get()};
    std::vector<float> out(n_params_);
    b[which]->download(out.data(), out.size() * 4);
    return out;
}

void GpuHeadTrainer::set_flat(int which, const std::vector<float>& v) {
    gpu::Buffer* b[] = {params_.get(), grads_.get(), m_.get(), v_.get()};
    if (v.size() != n_params_) throw std::invalid_argument("flat parameter vector of the wrong size");
    b[which]->upload(v.data(), v.size() * 4);
}

namespace {
std::vector<MedusaHead> unpack(const std::vector<float>& p, int K, int L, int D, int V) {
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
}  // namespace

MedusaHeads GpuHeadTrainer::heads() const {
    MedusaHeads h = shape_;
    h.heads = unpack(flat(0), k_, layers_, dim_, vocab_);
    return h;
}

std::vector<MedusaHead> GpuHeadTrainer::gradients() const { return unpack(flat(1), k_, layers_, dim_, vocab_); }

}  // namespace medusa::train
