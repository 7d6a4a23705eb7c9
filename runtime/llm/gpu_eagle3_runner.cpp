#include "llm/gpu_eagle3_runner.h"

#include <cmath>
#include <stdexcept>

#include "llm/kernel_params.h"
#include "llm/matrix_views.h"

namespace medusa {

using namespace kernels;

namespace {

const EagleLayer& eagle3_layer(const EagleLayer& e) {
    if (!e.eagle3()) throw std::invalid_argument("GpuEagle3Runner runs EAGLE-3 layers");
    return e;
}

}  // namespace

GpuEagle3Runner::GpuEagle3Runner(GpuModel& target, const EagleLayer& e, std::function<void()> attach)
    : GpuEagleRunnerBase(target, eagle3_layer(e), e.attention_input(), std::move(attach)) {
    target.capture_layer_inputs(e.target_layers);
    gpu::Context& ctx = target.context();
    eps_ = e.rms_eps;
    draft_vocab_ = e.draft_vocab();
    feature_dim_ = e.feature_dim();
    fuses_ = e.fuses();
    draft_to_target_ = e.draft_to_target;
    const int d = e.dim;
    MatrixViews matrices(e.matrix_type);
    if (fuses_) {
        const Tensor fc = matrices.view(e.fc_w, d, feature_dim_);
        fc_ = upload_matrix(ctx, {&fc});
    }
    if (e.norms_feature()) feature_norm_ = upload_floats(ctx, e.feature_norm);
    const Tensor head = matrices.view(e.draft_head, draft_vocab_, d);
    head_ = upload_matrix(ctx, {&head});
    input_norm_ = upload_floats(ctx, e.input_norm);
    hidden_norm_ = upload_floats(ctx, e.hidden_norm);
    final_norm_ = upload_floats(ctx, e.final_norm);
    const size_t T = MAX_BLOCK_TOKENS;
    auto device = [&](size_t floats) { return std::make_unique<gpu::Buffer>(ctx, floats * 4, gpu::MemoryKind::Device); };
    gathered_ = device(T * size_t(feature_dim_));
    if (feature_norm_) normed_feature_ = device(T * size_t(feature_dim_));
    x_in_ = device(T * e.attention_input());
    normed_ = device(T * d);
    draft_logits_ = std::make_unique<gpu::Buffer>(ctx, T * draft_vocab_ * 4, gpu::MemoryKind::Host);
    gather_kernel_ = std::make_unique<gpu::Kernel>(ctx, gpu::Shader::eagle3_gather, 5, sizeof(RowPush));
    input_kernel_ = std::make_unique<gpu::Kernel>(ctx, gpu::Shader::eagle3_input, 5, sizeof(RmsnormPush));
    rmsnorm_kernel_ = std::make_unique<gpu::Kernel>(ctx, gpu::Shader::rmsnorm, 5, sizeof(RmsnormPush));
}

GpuEagle3Runner::~GpuEagle3Runner() = default;

int GpuEagle3Runner::variant(std::span<const int> source) const {
    const bool from_target = !source.empty() && source[0] < 0;
    for (int s : source)
        if ((s < 0) != from_target)
            throw std::invalid_argument("an EAGLE-3 block takes all its features from one kind of source");
    return from_target ? FromTarget : FromStore;
}

GpuEagle3Runner::LayerInput GpuEagle3Runner::record_input(gpu::CommandSequence& seq, int T, int variant) {
    const bool from_target = variant == FromTarget;
    const uint32_t d = shape_.dim;
    // The hidden input h: the target's feature (fused by fc when several layers make it), or the
    // layer's own earlier output.
    const uint32_t width = from_target ? uint32_t(feature_dim_) : d;
    gpu::Buffer& gathered = from_target && fuses_ ? *gathered_ : *x_;
    seq.dispatch_over(*gather_kernel_, {target_.kv_cache().features(), *store_, *inputs_, *params_, gathered},
                      RowPush{width}, width, uint32_t(T));
    if (from_target && fuses_) {
        gpu::Buffer* into_fc = gathered_.get();
        if (feature_norm_) {  // (store_features 0: the store binding is a placeholder)
            seq.dispatch(*rmsnorm_kernel_, {*gathered_, *feature_norm_, *normed_feature_, *store_, *params_},
                         RmsnormPush{width, uint32_t(T), eps_, 0u}, subgroup_item_groups(target_.context(), uint32_t(T)));
            into_fc = normed_feature_.get();
        }
        matmuls_->record(seq, {.w = &fc_, .x = into_fc, .y = x_.get(), .out_rows = int(d), .tokens = T,
                               .x_stride = width, .y_stride = d});
    }
    seq.dispatch(*input_kernel_, {*emb_, *x_, *input_norm_, *hidden_norm_, *x_in_},
                 RmsnormPush{d, uint32_t(T), eps_, 0u}, subgroup_item_groups(target_.context(), uint32_t(T)));
    return {x_in_.get(), 2 * d};
}

void GpuEagle3Runner::record_head(gpu::CommandSequence& seq, int T) {
    const uint32_t d = shape_.dim;
    // The final norm writes no feature (store_features 0): the store binding is a placeholder.
    seq.dispatch(*rmsnorm_kernel_, {*x_, *final_norm_, *normed_, *store_, *params_},
                 RmsnormPush{d, uint32_t(T), eps_, 0u}, subgroup_item_groups(target_.context(), uint32_t(T)));
    matmuls_->record(seq, {.w = &head_, .x = normed_.get(), .y = draft_logits_.get(), .out_rows = draft_vocab_,
                           .tokens = T, .x_stride = d, .y_stride = uint32_t(draft_vocab_)});
}

void GpuEagle3Runner::ran(int T) {
    logits_.assign(size_t(T) * vocab_, 0.0f);
    placed_.assign(size_t(T), 0);
}

std::span<const float> GpuEagle3Runner::logits(int t) {
    if (t < 0 || t >= block_size_) throw std::out_of_range("EAGLE logits of a token outside the last block");
    float* l = &logits_[size_t(t) * vocab_];
    if (!placed_[size_t(t)]) {
        const float* draft = static_cast<const float*>(draft_logits_->mapped()) + size_t(t) * draft_vocab_;
        std::fill_n(l, vocab_, -INFINITY);
        for (int i = 0; i < draft_vocab_; ++i) l[draft_to_target_[size_t(i)]] = draft[i];
        placed_[size_t(t)] = 1;
    }
    return {l, size_t(vocab_)};
}

}  // namespace medusa
