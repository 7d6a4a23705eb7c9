#include "llm/gpu_eagle3_runner.h"

#include <cmath>
#include <stdexcept>

#include "llm/block_encoding.h"
#include "llm/eagle_inputs_encoding.h"
#include "llm/kernel_params.h"
#include "llm/matrix_views.h"

namespace medusa {

using namespace kernels;

GpuEagle3Runner::GpuEagle3Runner(GpuModel& target, const EagleLayer& e, std::function<void()> attach)
    : target_(target), attach_(std::move(attach)), feature_version_(target.kv_cache().feature_version()) {
    const LlamaConfig& cfg = target.config();
    if (!e.eagle3()) throw std::invalid_argument("GpuEagle3Runner runs EAGLE-3 layers");
    e.check_fits(cfg);
    target.capture_layer_inputs(e.target_layers);
    gpu::Context& ctx = target.context();
    shape_ = {e.dim, e.hidden_dim, e.n_heads, e.n_kv_heads, cfg.seq_len, e.rope_theta, e.rope_position_scale};
    eps_ = e.rms_eps;
    vocab_ = cfg.vocab_size;
    draft_vocab_ = e.draft_vocab();
    feature_dim_ = e.feature_dim();
    fuses_ = e.fuses();
    draft_to_target_ = e.draft_to_target;
    const int d = e.dim, kv = e.kv_dim(), h = e.hidden_dim, in = e.attention_input();
    MatrixViews matrices(e.matrix_type);
    auto view = [&](const std::vector<float>& v, int rows, int cols) { return matrices.view(v, rows, cols); };
    if (fuses_) {
        const Tensor fc = view(e.fc_w, d, feature_dim_);
        fc_ = upload_matrix(ctx, {&fc});
    }
    if (e.norms_feature()) feature_norm_ = upload_floats(ctx, e.feature_norm);
    const Tensor wq = view(e.wq, d, in), wk = view(e.wk, kv, in), wv = view(e.wv, kv, in), wo = view(e.wo, d, d),
                 gate = view(e.w_gate, h, d), up = view(e.w_up, h, d), down = view(e.w_down, d, h),
                 head = view(e.draft_head, draft_vocab_, d);
    layer_.ffn_norm = upload_floats(ctx, e.post_norm);  // the input norms are eagle3_input's
    layer_.wqkv = upload_matrix(ctx, {&wq, &wk, &wv});
    layer_.wo = upload_matrix(ctx, {&wo});
    layer_.w13 = upload_matrix(ctx, {&gate, &up});
    layer_.w2 = upload_matrix(ctx, {&down});
    head_ = upload_matrix(ctx, {&head});
    input_norm_ = upload_floats(ctx, e.input_norm);
    hidden_norm_ = upload_floats(ctx, e.hidden_norm);
    final_norm_ = upload_floats(ctx, e.final_norm);
    kv_ = std::make_unique<KvCache>(ctx, 1, cfg.seq_len, kv);
    matmuls_ = std::make_unique<MatmulRecorder>(ctx, target.matmuls().cpu_layouts(), e.rms_eps, target.matmuls().config());
    recorder_ = std::make_unique<DecoderLayerRecorder>(ctx, shape_, *matmuls_,
                                                       e.rope_freqs.empty() ? nullptr : upload_floats(ctx, e.rope_freqs));
    const size_t T = MAX_BLOCK_TOKENS;
    auto device = [&](size_t floats) { return std::make_unique<gpu::Buffer>(ctx, floats * 4, gpu::MemoryKind::Device); };
    params_ = std::make_unique<gpu::Buffer>(ctx, sizeof(layout::BlockParams), gpu::MemoryKind::Host);
    inputs_ = std::make_unique<gpu::Buffer>(ctx, sizeof(layout::EagleInputs), gpu::MemoryKind::Host);
    emb_ = device(T * d);
    gathered_ = device(T * size_t(feature_dim_));
    if (feature_norm_) normed_feature_ = device(T * size_t(feature_dim_));
    x_ = device(T * d);
    x_in_ = device(T * in);
    qkv_ = device(T * (d + 2 * kv));
    att_out_ = device(T * d);
    hb_ = device(T * h);
    scores_ = device(T * e.n_heads * size_t(cfg.seq_len));
    store_ = device(size_t(kStoreRows) * d);
    store_->fill_zero();
    normed_ = device(T * d);
    draft_logits_ = std::make_unique<gpu::Buffer>(ctx, T * draft_vocab_ * 4, gpu::MemoryKind::Host);
    gather_kernel_ = std::make_unique<gpu::Kernel>(ctx, gpu::Shader::eagle3_gather, 5, sizeof(RowPush));
    input_kernel_ = std::make_unique<gpu::Kernel>(ctx, gpu::Shader::eagle3_input, 5, sizeof(RmsnormPush));
    store_kernel_ = std::make_unique<gpu::Kernel>(ctx, gpu::Shader::eagle_store, 4, sizeof(RowPush));
    rmsnorm_kernel_ = std::make_unique<gpu::Kernel>(ctx, gpu::Shader::rmsnorm, 5, sizeof(RmsnormPush));
}

GpuEagle3Runner::~GpuEagle3Runner() = default;

void GpuEagle3Runner::attach() {
    if (attach_) attach_();
    drop_if_features_replaced(sequences_, feature_version_, target_.kv_cache());
}

void GpuEagle3Runner::prepare(int n_tokens) {
    sequence(n_tokens, true);
    sequence(n_tokens, false);
}

gpu::CommandSequence& GpuEagle3Runner::sequence(int T, bool from_target) {
    drop_if_features_replaced(sequences_, feature_version_, target_.kv_cache());
    auto& seq = sequences_[{T, from_target}];
    if (seq) return *seq;
    seq = std::make_unique<gpu::CommandSequence>(target_.context());
    const uint32_t d = shape_.dim, in = 2 * d;
    seq->begin();
    seq->stage("eagle");
    target_.record_embed(*seq, *params_, *emb_, T);
    // The hidden input h: the target's feature (fused by fc when several layers make it), or the
    // layer's own earlier output.
    const uint32_t width = from_target ? uint32_t(feature_dim_) : d;
    gpu::Buffer& gathered = from_target && fuses_ ? *gathered_ : *x_;
    seq->dispatch_over(*gather_kernel_, {target_.kv_cache().features(), *store_, *inputs_, *params_, gathered},
                       RowPush{width}, width, uint32_t(T));
    if (from_target && fuses_) {
        gpu::Buffer* into_fc = gathered_.get();
        if (feature_norm_) {  // (store_features 0: the store binding is a placeholder)
            seq->dispatch(*rmsnorm_kernel_, {*gathered_, *feature_norm_, *normed_feature_, *store_, *params_},
                          RmsnormPush{width, uint32_t(T), eps_, 0u}, subgroup_item_groups(target_.context(), uint32_t(T)));
            into_fc = normed_feature_.get();
        }
        matmuls_->record(*seq, {.w = &fc_, .x = into_fc, .y = x_.get(), .out_rows = int(d), .tokens = T,
                                .x_stride = width, .y_stride = d});
    }
    seq->dispatch(*input_kernel_, {*emb_, *x_, *input_norm_, *hidden_norm_, *x_in_},
                  RmsnormPush{d, uint32_t(T), eps_, 0u}, subgroup_item_groups(target_.context(), uint32_t(T)));
    recorder_->record(*seq, layer_,
                      {x_.get(), qkv_.get(), att_out_.get(), hb_.get(), scores_.get(), x_in_.get(), in}, *kv_, 0,
                      *params_, T);
    seq->stage("eagle");
    seq->dispatch_over(*store_kernel_, {*x_, *store_, *inputs_, *params_}, RowPush{d}, d, uint32_t(T));
    // The final norm writes no feature (store_features 0): the store binding is a placeholder.
    seq->dispatch(*rmsnorm_kernel_, {*x_, *final_norm_, *normed_, *store_, *params_},
                  RmsnormPush{d, uint32_t(T), eps_, 0u}, subgroup_item_groups(target_.context(), uint32_t(T)));
    matmuls_->record(*seq, {.w = &head_, .x = normed_.get(), .y = draft_logits_.get(), .out_rows = draft_vocab_,
                            .tokens = T, .x_stride = d, .y_stride = uint32_t(draft_vocab_)});
    seq->end();
    return *seq;
}

void GpuEagle3Runner::run(const TokenBlock& block, std::span<const int> source) {
    block.validate(shape_.context, vocab_);
    const int T = block.size();
    const layout::EagleInputs in = encode_eagle_inputs(source, T, rows_, kStoreRows, shape_.context);
    const bool from_target = T > 0 && source[0] < 0;
    for (int s : source)
        if ((s < 0) != from_target)
            throw std::invalid_argument("an EAGLE-3 block takes all its features from one kind of source");
    gpu::CommandSequence& seq = sequence(T, from_target);
    seq.wait();
    const layout::BlockParams p = encode_block(block);
    params_->upload(&p, sizeof p);
    inputs_->upload(&in, sizeof in);
    target_.kv_cache().settle();  // the target's features of its last accepted path where they were moved
    seq.run();
    ++submits_;
    rows_ += T;
    block_size_ = T;
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
