#include "llm/gpu_eagle_runner.h"

#include <stdexcept>

#include "llm/kernel_params.h"
#include "llm/matrix_views.h"

namespace medusa {

using namespace kernels;

GpuEagleRunner::GpuEagleRunner(GpuModel& target, const EagleLayer& e, std::function<void()> attach)
    : GpuEagleRunnerBase(target, e, e.dim, std::move(attach)) {
    gpu::Context& ctx = target.context();
    const int d = e.dim;
    MatrixViews matrices(e.matrix_type);
    const Tensor fc = matrices.view(e.fc_w, d, 2 * d);
    fc_ = upload_matrix(ctx, {&fc});
    fc_bias_ = upload_floats(ctx, e.fc_b);
    const size_t T = MAX_BLOCK_TOKENS;
    x_in_ = std::make_unique<gpu::Buffer>(ctx, T * 2 * d * 4, gpu::MemoryKind::Device);
    logits_ = std::make_unique<gpu::Buffer>(ctx, T * vocab_ * 4, gpu::MemoryKind::Host);
    input_kernel_ = std::make_unique<gpu::Kernel>(ctx, gpu::Shader::eagle_input, 6, sizeof(RowPush));
    bias_kernel_ = std::make_unique<gpu::Kernel>(ctx, gpu::Shader::add_bias, 3, sizeof(RowPush));
}

GpuEagleRunner::~GpuEagleRunner() = default;

GpuEagleRunner::LayerInput GpuEagleRunner::record_input(gpu::CommandSequence& seq, int T, int) {
    const uint32_t d = shape_.dim;
    seq.dispatch_over(*input_kernel_, {*emb_, target_.kv_cache().features(), *store_, *inputs_, *params_, *x_in_},
                      RowPush{d}, d, uint32_t(T));
    matmuls_->record(seq, {.w = &fc_, .x = x_in_.get(), .y = x_.get(), .out_rows = int(d), .tokens = T,
                           .x_stride = 2 * d, .y_stride = d});
    seq.dispatch_over(*bias_kernel_, {*x_, *fc_bias_, *params_}, RowPush{d}, d, uint32_t(T));
    return {};
}

void GpuEagleRunner::record_head(gpu::CommandSequence& seq, int T) {
    matmuls_->record(seq, {.w = &target_.classifier(), .x = x_.get(), .y = logits_.get(), .out_rows = vocab_,
                           .tokens = T, .x_stride = uint32_t(shape_.dim), .y_stride = uint32_t(vocab_)});
}

std::span<const float> GpuEagleRunner::logits(int t) {
    if (t < 0 || t >= block_size_) throw std::out_of_range("EAGLE logits of a token outside the last block");
    const float* l = static_cast<const float*>(logits_->mapped());
    return {l + size_t(t) * vocab_, size_t(vocab_)};
}

}  // namespace medusa
