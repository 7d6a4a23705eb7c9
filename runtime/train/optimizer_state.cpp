#include "train/optimizer_state.h"

#include <cmath>
#include <stdexcept>

namespace medusa::train {

OptimizerState::OptimizerState(gpu::Context& ctx, const std::vector<float>& initial, size_t extra_step_floats)
    : n_(initial.size()) {
    if (n_ == 0) throw std::invalid_argument("nothing to train");
    for (auto& b : buf_) {
        b = std::make_unique<gpu::Buffer>(ctx, n_ * 4, gpu::MemoryKind::Device);
        b->fill_zero();
    }
    step_params_ = std::make_unique<gpu::Buffer>(ctx, (kFirstExtra + extra_step_floats) * 4, gpu::MemoryKind::Host);
    step_params_->fill_zero();
    parts_ = std::make_unique<gpu::Buffer>(ctx, TrainKernels::kGradParts * 4, gpu::MemoryKind::Host);
    parts_->fill_zero();
    write(kParams, initial);
}

std::vector<float> OptimizerState::read(Which which) const {
    std::vector<float> out(n_);
    buf_[which]->download(out.data(), n_ * 4);
    return out;
}

void OptimizerState::write(Which which, const std::vector<float>& v) {
    if (v.size() != n_) throw std::invalid_argument("flat parameter vector of the wrong size");
    buf_[which]->upload(v.data(), n_ * 4);
}

void OptimizerState::set_step(const AdamW& opt, int step, std::span<const float> extra) {
    const float t = float(std::max(step, 1));
    std::vector<float> sp = {opt.lr,    1.0f - std::pow(opt.beta1, t), 1.0f - std::pow(opt.beta2, t), opt.beta1,
                             opt.beta2, opt.eps,                       opt.weight_decay,              opt.clip};
    sp.insert(sp.end(), extra.begin(), extra.end());
    if (sp.size() * 4 > step_params_->size()) throw std::invalid_argument("too many step parameters");
    step_params_->upload(sp.data(), sp.size() * 4);
}

void OptimizerState::record_update(gpu::CommandSequence& s, const TrainKernels& k, bool update) const {
    k.grad_norm(s, *buf_[kGrads], *parts_, uint32_t(n_));
    if (update)
        k.adamw(s, *buf_[kParams], *buf_[kGrads], *buf_[kFirstMoment], *buf_[kSecondMoment], *parts_, *step_params_,
                uint32_t(n_));
}

double OptimizerState::grad_norm() const {
    std::vector<float> parts(TrainKernels::kGradParts);
    parts_->download(parts.data(), parts.size() * 4);
    double ss = 0;
    for (float x : parts) ss += x;
    return std::sqrt(ss);
}

}  // namespace medusa::train
