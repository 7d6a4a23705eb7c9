#include "llm/gpu_eagle_runner_base.h"

#include "llm/block_encoding.h"
#include "llm/eagle_inputs_encoding.h"
#include "llm/kernel_params.h"
#include "llm/matrix_views.h"

namespace medusa {

using namespace kernels;

GpuEagleRunnerBase::GpuEagleRunnerBase(GpuModel& target, const EagleLayer& e, int in, std::function<void()> attach)
    : target_(target), attach_(std::move(attach)), feature_version_(target.kv_cache().feature_version()) {
    const LlamaConfig& cfg = target.config();
    e.check_fits(cfg);
    gpu::Context& ctx = target.context();
    shape_ = {e.dim, e.hidden_dim, e.n_heads, e.n_kv_heads, cfg.seq_len, e.rope_theta, e.rope_position_scale};
    shape_.head_size = e.head_size;
    vocab_ = cfg.vocab_size;
    const int d = e.dim, kv = e.kv_dim(), h = e.hidden_dim, q = e.q_dim();
    MatrixViews matrices(e.matrix_type);
    auto view = [&](const std::vector<float>& v, int rows, int cols) { return matrices.view(v, rows, cols); };
    const Tensor wq = view(e.wq, q, in), wk = view(e.wk, kv, in), wv = view(e.wv, kv, in), wo = view(e.wo, d, q),
                 gate = view(e.w_gate, h, d), up = view(e.w_up, h, d), down = view(e.w_down, d, h);
    layer_.attention = {0, e.rope_theta, e.rope_position_scale};  // the draft layer attends to every earlier key
    layer_.ffn_norm = upload_floats(ctx, e.post_norm);  // no input norm: EAGLE's layer 0 has none, EAGLE-3's are its input's
    layer_.wqkv = upload_matrix(ctx, {&wq, &wk, &wv});
    layer_.wo = upload_matrix(ctx, {&wo});
    layer_.w13 = upload_matrix(ctx, {&gate, &up});
    layer_.w2 = upload_matrix(ctx, {&down});
    kv_ = std::make_unique<KvCache>(ctx, 1, cfg.seq_len, kv);
    matmuls_ = std::make_unique<MatmulRecorder>(ctx, target.matmuls().cpu_layouts(), e.rms_eps, target.matmuls().config());
    recorder_ = std::make_unique<DecoderLayerRecorder>(ctx, shape_, *matmuls_,
                                                       e.rope_freqs.empty() ? nullptr : upload_floats(ctx, e.rope_freqs));
    const size_t T = MAX_BLOCK_TOKENS;
    auto device = [&](size_t floats) { return std::make_unique<gpu::Buffer>(ctx, floats * 4, gpu::MemoryKind::Device); };
    params_ = std::make_unique<gpu::Buffer>(ctx, sizeof(layout::BlockParams), gpu::MemoryKind::Host);
    inputs_ = std::make_unique<gpu::Buffer>(ctx, sizeof(layout::EagleInputs), gpu::MemoryKind::Host);
    emb_ = device(T * d);
    x_ = device(T * d);
    qkv_ = device(T * (q + 2 * kv));
    att_out_ = device(T * q);
    hb_ = device(T * h);
    scores_ = device(T * e.n_heads * size_t(cfg.seq_len));
    store_ = device(size_t(kStoreRows) * d);
    store_->fill_zero();
    store_kernel_ = std::make_unique<gpu::Kernel>(ctx, gpu::Shader::eagle_store, 4, sizeof(RowPush));
}

GpuEagleRunnerBase::~GpuEagleRunnerBase() = default;

void GpuEagleRunnerBase::attach() {
    if (attach_) attach_();
    drop_if_features_replaced(sequences_, feature_version_, target_.kv_cache());
}

gpu::CommandSequence& GpuEagleRunnerBase::sequence(int T, int variant) {
    drop_if_features_replaced(sequences_, feature_version_, target_.kv_cache());
    auto& seq = sequences_[{T, variant}];
    if (seq) return *seq;
    seq = std::make_unique<gpu::CommandSequence>(target_.context());
    const uint32_t d = shape_.dim;
    seq->begin();
    seq->stage("eagle");
    target_.record_embed(*seq, *params_, *emb_, T);
    const LayerInput in = record_input(*seq, T, variant);
    recorder_->record(*seq, layer_, {x_.get(), qkv_.get(), att_out_.get(), hb_.get(), scores_.get(), in.rows, in.width},
                      *kv_, 0, *params_, T);
    seq->stage("eagle");
    seq->dispatch_over(*store_kernel_, {*x_, *store_, *inputs_, *params_}, RowPush{d}, d, uint32_t(T));
    record_head(*seq, T);
    seq->end();
    return *seq;
}

void GpuEagleRunnerBase::prepare(int n_tokens) {
    for (int v = 0; v < variants(); ++v) sequence(n_tokens, v);
}

void GpuEagleRunnerBase::run(const TokenBlock& block, std::span<const int> source) {
    block.validate(shape_.context, vocab_);
    const int T = block.size();
    const layout::EagleInputs in = encode_eagle_inputs(source, T, rows_, kStoreRows, shape_.context);
    gpu::CommandSequence& seq = sequence(T, variant(source));
    seq.wait();
    const layout::BlockParams p = encode_block(block);
    params_->upload(&p, sizeof p);
    inputs_->upload(&in, sizeof in);
    // The target's feature cache must hold its last accepted path where it was moved to.
    target_.kv_cache().settle();
    seq.run();
    ++submits_;
    rows_ += T;
    block_size_ = T;
    ran(T);
}

}  // namespace medusa
