#include "train/gpu_head_trainer.h"

#include <cmath>
#include <stdexcept>

#include "layouts/push_constants.h"

namespace medusa::train {

GpuHeadTrainer::GpuHeadTrainer(gpu::Context& ctx, const MedusaHeads& init, int batch_rows,
                               TrainMatmul matmul)
    : shape_(init), k_(init.count()), dim_(init.dim), vocab_(init.vocab), layers_(init.layers), rows_(batch_rows),
      kernels_(ctx, 0, matmul),
      opt_(ctx, pack_heads(init), init.count()),
      pass_(ctx, init.count(), init.dim, init.vocab, init.layers, batch_rows) {
    if (k_ < 1 || rows_ < 1) throw std::invalid_argument("training needs at least one head and one row");
    for (auto& h : shape_.heads) h = MedusaHead{};  // only the sizes are kept on the CPU
    if (opt_.size() != pass_.size()) throw std::invalid_argument("Medusa heads of inconsistent sizes");
    using gpu::MemoryKind;
    h_ = gpu::zeroed_floats(ctx, size_t(rows_) * dim_, MemoryKind::Host);
    targets_ = gpu::zeroed_floats(ctx, size_t(k_) * rows_, MemoryKind::Host);
    stats_ = gpu::zeroed_floats(ctx, size_t(k_) * rows_ * 2, MemoryKind::Host);
    seqs_ = std::make_unique<StepSequences>(ctx, /*timed=*/false,
                                            [this](gpu::CommandSequence& s, bool backward, bool update) {
                                                record(s, backward, update);
                                            });
}

GpuHeadTrainer::~GpuHeadTrainer() = default;

void GpuHeadTrainer::record(gpu::CommandSequence& seq, bool backward, bool update) {
    seq.begin();
    pass_.record(seq, kernels_, opt_.params(), opt_.grads(), opt_.step_params(), kHeadLossScales, *h_, *targets_,
                 *stats_, backward);
    if (backward) opt_.record_update(seq, kernels_, update);
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
    opt_.set_step(opt, step, scales);
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
    seqs_->run_step(update);
    BatchStats s = read_stats(targets);
    s.grad_norm = opt_.grad_norm();
    return s;
}

BatchStats GpuHeadTrainer::evaluate(const std::vector<float>& h, const std::vector<int>& targets) {
    write_inputs(h, targets, std::vector<float>(k_, 0.0f), AdamW{}, 1);
    seqs_->run_eval();
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

std::vector<float> GpuHeadTrainer::flat(int which) const { return opt_.read(OptimizerState::Which(which)); }

void GpuHeadTrainer::set_flat(int which, const std::vector<float>& v) { opt_.write(OptimizerState::Which(which), v); }

MedusaHeads GpuHeadTrainer::heads() const {
    MedusaHeads h = shape_;
    h.heads = unpack_heads(flat(0), k_, layers_, dim_, vocab_);
    return h;
}

std::vector<MedusaHead> GpuHeadTrainer::gradients() const { return unpack_heads(flat(1), k_, layers_, dim_, vocab_); }

}  // namespace medusa::train
