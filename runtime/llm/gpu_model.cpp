#include "llm/gpu_model.h"

#include "gpu/vk_check.h"
#include "llm/kernel_params.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace medusa {

using namespace kernels;

namespace {

// Must match shaders/step_params.glsl.
constexpr int kTMax = TokenBlock::kMaxTokens;
constexpr int kMaskWords = kTMax / 32;
constexpr int kParamWords = 4 + 2 * kTMax + kTMax * kMaskWords;

}  // namespace

GpuModel::GpuModel(gpu::Context& ctx, const ModelFile& file, GpuModelOptions options)
    : ctx_(ctx),
      cfg_(file.config),
      options_(options),
      cpu_layouts_(options.layouts == KernelLayouts::Auto ? prefers_cpu_layouts(ctx)
                                                          : options.layouts == KernelLayouts::Cpu) {
    if (options_.context > 0) cfg_.seq_len = std::min(cfg_.seq_len, options_.context);
    const size_t dim = cfg_.dim, kv = cfg_.kv_dim(), ctx_len = cfg_.seq_len;
    auto dev = gpu::MemoryKind::Device;

    embeddings_ = upload_matrix(ctx, {&file.get("tok_embeddings")});
    classifier_ = upload_matrix(ctx, {&file.classifier()});
    final_norm_ = upload_vector(ctx, file.get("norm"));
    weight_bytes_ = embeddings_.bytes() + (cfg_.tied_classifier ? 0 : classifier_.bytes()) + final_norm_->size();
    for (int l = 0; l < cfg_.n_layers; ++l) {
        const std::string p = "layers." + std::to_string(l) + ".";
        Layer L;
        L.attention_norm = upload_vector(ctx, file.get(p + "attention_norm"));
        L.ffn_norm = upload_vector(ctx, file.get(p + "ffn_norm"));
        L.wqkv = upload_matrix(ctx, {&file.get(p + "wq"), &file.get(p + "wk"), &file.get(p + "wv")});
        L.wo = upload_matrix(ctx, {&file.get(p + "wo")});
        L.w13 = upload_matrix(ctx, {&file.get(p + "w1"), &file.get(p + "w3")});
        L.w2 = upload_matrix(ctx, {&file.get(p + "w2")});
        weight_bytes_ += L.attention_norm->size() + L.ffn_norm->size() + L.wqkv.bytes() + L.wo.bytes() +
                         L.w13.bytes() + L.w2.bytes();
        layers_.push_back(std::move(L));
    }
    // One K and one V buffer for all layers, so a single dispatch can compact every layer.
    key_cache_ = std::make_unique<gpu::Buffer>(ctx, size_t(cfg_.n_layers) * ctx_len * kv * 4, dev);
    value_cache_ = std::make_unique<gpu::Buffer>(ctx, size_t(cfg_.n_layers) * ctx_len * kv * 4, dev);
    key_cache_->fill_zero();
    value_cache_->fill_zero();
    params_ = std::make_unique<gpu::Buffer>(ctx, kParamWords * 4, gpu::MemoryKind::Host);
    x_ = std::make_unique<gpu::Buffer>(ctx, kTMax * dim * 4, dev);
    qkv_ = std::make_unique<gpu::Buffer>(ctx, kTMax * (dim + 2 * kv) * 4, dev);
    att_out_ = std::make_unique<gpu::Buffer>(ctx, kTMax * dim * 4, dev);
    hidden_ = std::make_unique<gpu::Buffer>(ctx, kTMax * dim * 4, dev);
    hb_ = std::make_unique<gpu::Buffer>(ctx, size_t(kTMax) * cfg_.hidden_dim * 4, dev);
    scores_ = std::make_unique<gpu::Buffer>(ctx, size_t(kTMax) * cfg_.n_heads * ctx_len * 4, dev);
    logits_ = std::make_unique<gpu::Buffer>(ctx, size_t(kTMax) * cfg_.vocab_size * 4, gpu::MemoryKind::Host);
    argmax_ = std::make_unique<gpu::Buffer>(ctx, kTMax * 4, gpu::MemoryKind::Host);
    if (!params_->mapped() || !logits_->mapped() || !argmax_->mapped())
        throw gpu::VulkanError("the device offers no host-visible memory for step parameters and logits");

    kernels_["rope_kv"] = std::make_unique<gpu::Kernel>(ctx, "rope_kv", 4, sizeof(RopePush));
    kernels_["attention"] = std::make_unique<gpu::Kernel>(
        ctx, "attention", 6, sizeof(AttentionPush), std::vector<uint32_t>{cpu_layouts_ && cfg_.head_dim() % 4 == 0 ? uint32_t(cfg_.head_dim()) : 0u});
    kernels_["rmsnorm"] = std::make_unique<gpu::Kernel>(ctx, "rmsnorm", 3, sizeof(RmsnormPush));
    kernels_["argmax"] = std::make_unique<gpu::Kernel>(ctx, "argmax", 2, sizeof(ArgmaxPush));
}

GpuModel::~GpuModel() = default;

const gpu::Kernel& GpuModel::matmul_kernel(const std::string& variant, const std::vector<uint32_t>& spec) {
    std::string key = "matmul_" + variant;
    for (uint32_t c : spec) key += "/" + std::to_string(c);
    auto& k = kernels_[key];
    if (!k) k = std::make_unique<gpu::Kernel>(ctx_, "matmul_" + variant, 5, sizeof(MatmulPush), spec);
    return *k;
}

const gpu::Kernel& GpuModel::embed_kernel(const std::string& variant) {
    auto& k = kernels_["embed_" + variant];
    if (!k) k = std::make_unique<gpu::Kernel>(ctx_, "embed_" + variant, 4, sizeof(EmbedPush));
    return *k;
}

void GpuModel::record_matmul(gpu::CommandSequence& seq, const GpuMatrix& w, gpu::BufferRef x, gpu::BufferRef y,
                             const gpu::Buffer* extra, uint32_t flags, int out_rows, int n_tokens,
                             uint32_t x_stride, uint32_t y_stride, int block_rows) {
    if (block_rows > 0 && (n_tokens != 1 || out_rows % block_rows != 0))
        throw std::invalid_argument("row blocks need one token and a whole number of blocks");
    // One dispatch per segment of the stack; a fused SwiGLU and row blocks need a single one.
    if ((flags & kMatmulSwiglu) || block_rows > 0) w.only();
    for (const GpuMatrix::Segment& s : w.segments) {
        const int rows = w.segments.size() == 1 ? out_rows : s.rows;
        MatmulPush push{uint32_t(w.cols), uint32_t(rows), uint32_t(n_tokens), s.group_shift(), flags, x_stride,
                        y_stride, cfg_.rms_eps, uint32_t(block_rows > 0 ? block_rows : rows), uint32_t(s.first_row)};
        const MatmulGeometry g = matmul_geometry(ctx_, uint32_t(rows), n_tokens, cpu_layouts_);
        seq.dispatch(matmul_kernel(s.variant, g.spec), {*s.words, *s.scales, x, y, extra ? *extra : *final_norm_},
                     push, g.groups_x, g.groups_y);
    }
}

void GpuModel::record_forward(gpu::CommandSequence& seq, int T) {
    const uint32_t dim = cfg_.dim, kv = cfg_.kv_dim(), hd = cfg_.head_dim(), hidden = cfg_.hidden_dim;
    seq.stage("embed");
    {
        const GpuMatrix::Segment& e = embeddings_.only();
        const uint32_t epw = elements_per_word(e.variant);
        seq.dispatch(embed_kernel(e.variant), {*e.words, *e.scales, *params_, *x_}, EmbedPush{dim, e.group_shift()},
                     div_up(dim / epw, 64), uint32_t(T));
    }
    for (size_t l = 0; l < layers_.size(); ++l) {
        const Layer& L = layers_[l];
        const uint32_t cache_offset = uint32_t(l * cfg_.seq_len * kv);
        seq.stage("attention");
        record_matmul(seq, L.wqkv, *x_, *qkv_, L.attention_norm.get(), kMatmulNorm, L.wqkv.rows, T, dim, dim + 2 * kv);
        seq.dispatch(*kernels_["rope_kv"], {*qkv_, *key_cache_, *value_cache_, *params_},
                     RopePush{dim, kv, hd, cfg_.rope_theta, cache_offset}, div_up(dim / 2 + kv / 2 + kv, 64), uint32_t(T));
        seq.dispatch(*kernels_["attention"], {*qkv_, *key_cache_, *value_cache_, *params_, *scores_, *att_out_},
                     AttentionPush{dim, kv, hd, uint32_t(cfg_.n_heads), uint32_t(cfg_.n_heads / cfg_.n_kv_heads),
                                   uint32_t(cfg_.seq_len), cache_offset},
                     attention_groups(ctx_, uint32_t(cfg_.n_heads * T)));
        record_matmul(seq, L.wo, *att_out_, *x_, nullptr, kMatmulAccum, dim, T, dim, dim);
        seq.stage("ffn");
        record_matmul(seq, L.w13, *x_, *hb_, L.ffn_norm.get(), kMatmulNorm | kMatmulSwiglu, hidden, T, dim, hidden);
        record_matmul(seq, L.w2, *hb_, *x_, nullptr, kMatmulAccum, dim, T, hidden, dim);
    }
    seq.stage("classifier");
    seq.dispatch(*kernels_["rmsnorm"], {*x_, *final_norm_, *hidden_}, RmsnormPush{dim, uint32_t(T), cfg_.rms_eps},
                 uint32_t(T));
    record_matmul(seq, classifier_, *hidden_, *logits_, nullptr, 0, cfg_.vocab_size, T, dim, cfg_.vocab_size);
    seq.stage("argmax");
    seq.dispatch(*kernels_["argmax"], {*logits_, *argmax_}, ArgmaxPush{uint32_t(cfg_.vocab_size), uint32_t(T)},
                 uint32_t(T));
}

void GpuModel::write_params(const TokenBlock& block) {
    block.validate(cfg_.seq_len, cfg_.vocab_size);
    const int T = block.size();
    std::vector<uint32_t> p(kParamWords, 0);
    p[0] = uint32_t(block.base);
    p[1] = uint32_t(T);
    for (int t = 0; t < T; ++t) {
        p[4 + t] = uint32_t(block.tokens[t]);
        p[4 + kTMax + t] = uint32_t(block.positions[t]);
        for (int u = 0; u < T; ++u)
            if (block.sees(t, u)) p[4 + 2 * kTMax + t * kMaskWords + u / 32] |= 1u << (u % 32);
    }
    params_->upload(p.data(), p.size() * 4);
}

void GpuModel::forward(const TokenBlock& block) {
    const int T = block.size();
    auto& seq = sequences_[T];
    if (!seq) {
        seq = std::make_unique<gpu::CommandSequence>(ctx_, options_.timestamps);
        seq->begin();
        record_forward(*seq, T);
        seq->end();
    }
    seq->wait();  // a previous replay of the same buffer must not still read the parameters
    write_params(block);
    seq->run();
    ++submits_;
    last_ = seq.get();
    last_dispatches_ = seq->dispatch_count();
    block_size_ = T;
}

std::span<const float> GpuModel::logits(int t) {
    if (t < 0 || t >= block_size_) throw std::out_of_range("logits of a token outside the last block");
    const float* l = static_cast<const float*>(logits_->mapped());
    return {l + size_t(t) * cfg_.vocab_size, size_t(cfg_.vocab_size)};
}

int GpuModel::argmax(int t) {
    if (t < 0 || t >= block_size_) throw std::out_of_range("argmax of a token outside the last block");
    return int(static_cast<const uint32_t*>(argmax_->mapped())[t]);
}

std::vector<float> GpuModel::hidden(int t) const {
    if (t < 0 || t >= block_size_) throw std::out_of_range("hidden state of a token outside the last block");
    std::vector<float> h(cfg_.dim);
    hidden_->download(h.data(), h.size() * 4, size_t(t) * cfg_.dim * 4);
    return h;
}

std::vector<gpu::StageTime> GpuModel::stage_times() const { return last_ ? last_->stage_times() : std::vector<gpu::StageTime>{}; }

std::string GpuModel::weight_variants() const {
    const Layer& L = layers_.front();
    return "embeddings " + embeddings_.variant() + ", wqkv " + L.wqkv.variant() + ", wo " + L.wo.variant() +
           ", w1|w3 " + L.w13.variant() + ", w2 " + L.w2.variant() + ", classifier " + classifier_.variant();
}

}  // namespace medusa
