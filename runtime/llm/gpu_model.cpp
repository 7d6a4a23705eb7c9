#include "llm/gpu_model.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "gpu/vk_check.h"
#include "llm/block_encoding.h"
#include "llm/kernel_params.h"
#include "llm/kernel_tuning.h"
#include "llm/model_memory.h"

namespace medusa {

using namespace kernels;

std::optional<HostBufferAccess> host_buffers_from_environment() {
    const char* v = std::getenv("MEDUSA_HOST_BUFFERS");
    if (!v || !*v) return std::nullopt;
    const std::string value = v;
    if (value == "direct") return HostBufferAccess::Direct;
    if (value == "copies") return HostBufferAccess::DeviceCopies;
    throw std::invalid_argument("MEDUSA_HOST_BUFFERS='" + value + "' must be direct or copies");
}

bool uses_device_copies(gpu::Context& ctx, HostBufferAccess access) {
    if (access == HostBufferAccess::Auto) access = host_buffers_from_environment().value_or(HostBufferAccess::Auto);
    if (access != HostBufferAccess::Auto) return access == HostBufferAccess::DeviceCopies;
    return !gpu::Buffer(ctx, 4, gpu::MemoryKind::Host).device_local();  // where host buffers land
}

GpuModel::GpuModel(gpu::Context& ctx, const ModelFile& file, GpuModelOptions options)
    : ctx_(ctx),
      cfg_(file.config),
      options_(options),
      cpu_layouts_(options.layouts == KernelLayouts::Auto ? prefers_cpu_layouts(ctx)
                                                          : options.layouts == KernelLayouts::Cpu) {
    if (options_.context > 0) cfg_.seq_len = options_.context;
    const bool device_copies = uses_device_copies(ctx, options.host_buffers);
    check_fits_device(plan_model_memory(file, cfg_.seq_len, device_copies), ctx, file.path);
    const size_t dim = cfg_.dim, kv = cfg_.kv_dim(), q_dim = cfg_.q_dim(), ctx_len = cfg_.seq_len;
    constexpr size_t T = MAX_BLOCK_TOKENS;
    auto dev = gpu::MemoryKind::Device;

    embeddings_ = upload_matrix(ctx, {&file.get("tok_embeddings")});
    classifier_ = upload_matrix(ctx, {&file.classifier()});
    final_norm_ = upload_vector(ctx, file.get("norm"));
    weight_bytes_ = embeddings_.bytes() + (cfg_.tied_classifier ? 0 : classifier_.bytes()) + final_norm_->size();
    std::vector<int> windows;
    for (int l = 0; l < cfg_.n_layers; ++l) {
        const std::string p = "layers." + std::to_string(l) + ".";
        DecoderLayerWeights L;
        L.attention = layer_attention(cfg_, l);
        windows.push_back(L.attention.window);
        L.attention_norm = upload_vector(ctx, file.get(p + "attention_norm"));
        L.ffn_norm = upload_vector(ctx, file.get(p + "ffn_norm"));
        L.qk_norm = upload_qk_norm(ctx, file, l);
        if (cfg_.arch.post_norms) {
            L.post_attention_norm = upload_vector(ctx, file.get(p + "post_attention_norm"));
            L.post_ffn_norm = upload_vector(ctx, file.get(p + "post_ffn_norm"));
        }
        L.wqkv = upload_matrix(ctx, {&file.get(p + "wq"), &file.get(p + "wk"), &file.get(p + "wv")});
        L.wo = upload_matrix(ctx, {&file.get(p + "wo")});
        L.w13 = upload_matrix(ctx, {&file.get(p + "w1"), &file.get(p + "w3")});
        L.w2 = upload_matrix(ctx, {&file.get(p + "w2")});
        L.qkv_bias = upload_qkv_bias(ctx, file, l);
        weight_bytes_ += L.bytes();
        layers_.push_back(std::move(L));
    }
    kv_ = std::make_unique<KvCache>(ctx, cfg_.n_layers, cfg_.seq_len, cfg_.kv_dim(), cfg_.dim, windows);
    MatmulConfig matmul = default_matmul_config(ctx, cpu_layouts_);
    matmul_source_ = "default";
    if (options_.matmul) {
        matmul = *options_.matmul;
        matmul_source_ = "given";
    } else {
        if (auto tuned = load_tuned_matmul(kernel_tuning_path(), tuning_device_key(ctx), tuning_model_key(file),
                                           matmul_limits(ctx), matmul)) {
            matmul = *tuned;
            matmul_source_ = "tuned";
        }
        if (tiling_from_environment(matmul)) matmul_source_ += ", tiling from MEDUSA_TILED_MATMUL";
        if (quads_from_environment(matmul)) matmul_source_ += ", quads from MEDUSA_MATMUL_QUADS";
    }
    matmuls_ = std::make_unique<MatmulRecorder>(ctx, cpu_layouts_, cfg_.rms_eps, matmul);
    layer_recorder_ = std::make_unique<DecoderLayerRecorder>(ctx, DecoderShape::of(cfg_), *matmuls_,
                                                             upload_rope_factors(ctx, file, cfg_.seq_len));
    params_ = std::make_unique<gpu::Buffer>(ctx, sizeof(layout::BlockParams), gpu::MemoryKind::Host);
    if (device_copies) {
        device_params_ = std::make_unique<gpu::Buffer>(ctx, sizeof(layout::BlockParams), dev);
        device_logits_ = std::make_unique<gpu::Buffer>(ctx, T * cfg_.vocab_size * 4, dev);
    }
    x_ = std::make_unique<gpu::Buffer>(ctx, T * dim * 4, dev);
    qkv_ = std::make_unique<gpu::Buffer>(ctx, T * (q_dim + 2 * kv) * 4, dev);
    att_out_ = std::make_unique<gpu::Buffer>(ctx, T * q_dim * 4, dev);
    hidden_ = std::make_unique<gpu::Buffer>(ctx, T * dim * 4, dev);
    hb_ = std::make_unique<gpu::Buffer>(ctx, T * cfg_.hidden_dim * 4, dev);
    scores_ = std::make_unique<gpu::Buffer>(ctx, T * cfg_.n_heads * ctx_len * 4, dev);
    logits_ = std::make_unique<gpu::Buffer>(ctx, T * cfg_.vocab_size * 4, gpu::MemoryKind::Host);
    argmax_ = std::make_unique<gpu::Buffer>(ctx, T * 4, gpu::MemoryKind::Host);
    if (!params_->mapped() || !logits_->mapped() || !argmax_->mapped())
        throw gpu::VulkanError("the device offers no host-visible memory for block parameters and logits");

    rmsnorm_ = std::make_unique<gpu::Kernel>(ctx, gpu::Shader::rmsnorm, 5, sizeof(RmsnormPush));
    argmax_width_ = logit_row_width(ctx, cpu_layouts_);
    argmax_kernel_ = logit_rows_kernel(ctx, LogitRows::Argmax, uint32_t(cfg_.vocab_size), forward_logits(),
                                       sizeof(ArgmaxPush), argmax_width_);
}

GpuModel::~GpuModel() = default;

const gpu::Kernel& GpuModel::embed_kernel(MatrixVariant variant) {
    auto& k = embed_kernels_[variant];
    if (!k) k = std::make_unique<gpu::Kernel>(ctx_, embed_shader(variant), 4, sizeof(EmbedPush));
    return *k;
}

void GpuModel::record_embed(gpu::CommandSequence& seq, gpu::Buffer& params, gpu::Buffer& out, int T) {
    const GpuMatrix::Segment& e = embeddings_.only();
    const uint32_t dim = cfg_.dim, epw = elements_per_word(e.variant);
    seq.dispatch_over(embed_kernel(e.variant), {*e.words, *e.scales, params, out},
                      EmbedPush{dim, e.group_shift(), uint32_t(cfg_.vocab_size), cfg_.arch.embedding_scale}, dim / epw,
                      uint32_t(T));
}

void GpuModel::record_forward(gpu::CommandSequence& seq, int T) {
    const uint32_t dim = cfg_.dim;
    seq.stage("embed");
    if (device_params_) seq.copy(*params_, 0, *device_params_, 0, sizeof(layout::BlockParams));
    gpu::Buffer& params = forward_params();
    record_embed(seq, params, *x_, T);
    // The hidden state's buffer is free until the final norm: the post-norms' scratch.
    const DecoderActivations acts{.x = x_.get(), .qkv = qkv_.get(), .att_out = att_out_.get(), .hb = hb_.get(),
                                  .scores = scores_.get(), .post = hidden_.get()};
    for (size_t l = 0; l < layers_.size(); ++l) {
        const auto captured = std::find(feature_layers_.begin(), feature_layers_.end(), int(l));
        if (captured != feature_layers_.end()) {
            if (!feature_store_)
                feature_store_ = std::make_unique<gpu::Kernel>(ctx_, gpu::Shader::feature_store, 3, sizeof(FeatureStorePush));
            const uint32_t column = uint32_t(captured - feature_layers_.begin()) * dim;
            seq.dispatch_over(*feature_store_, {*x_, kv_->features(), params},
                              FeatureStorePush{dim, uint32_t(kv_->feature_dim()), column}, dim, uint32_t(T));
        }
        layer_recorder_->record(seq, layers_[l], acts, *kv_, int(l), params, T);
    }
    seq.stage("classifier");
    const uint32_t final_norm_features = feature_layers_.empty() ? 1u : 0u;
    seq.dispatch(*rmsnorm_, {*x_, *final_norm_, *hidden_, kv_->features(), params},
                 RmsnormPush{dim, uint32_t(T), cfg_.rms_eps, final_norm_features, 0u},
                 subgroup_item_groups(ctx_, uint32_t(T)));
    matmuls_->record(seq, {.w = &classifier_, .x = hidden_.get(), .y = &forward_logits(),
                           .out_rows = cfg_.vocab_size, .tokens = T, .x_stride = dim,
                           .y_stride = uint32_t(cfg_.vocab_size)});
    seq.stage("argmax");
    record_logit_rows(seq, *argmax_kernel_, forward_logits(), *argmax_,
                      ArgmaxPush{uint32_t(cfg_.vocab_size), uint32_t(T)}, uint32_t(T), argmax_width_ > 0);
    // For logits(): the block's rows into host memory (a tree runner's statistics read the device's).
    if (device_logits_) seq.copy(*device_logits_, 0, *logits_, 0, size_t(T) * cfg_.vocab_size * 4);
}

void GpuModel::drop_recorded_forwards() {
    for (auto& [size, seq] : sequences_) seq->wait();
    sequences_.clear();
    last_ = nullptr;
}

void GpuModel::set_matmul_config(const MatmulConfig& config) {
    drop_recorded_forwards();
    matmuls_->set_config(config);
    matmul_source_ = "given";
}

void GpuModel::capture_layer_inputs(std::vector<int> layers) {
    if (layers == feature_layers_) return;
    for (int l : layers)
        if (l < 0 || l >= cfg_.n_layers) throw std::invalid_argument("no layer " + std::to_string(l) + " to capture");
    drop_recorded_forwards();
    feature_layers_ = std::move(layers);
    kv_->set_feature_dim(feature_layers_.empty() ? cfg_.dim : int(feature_layers_.size()) * cfg_.dim);
}

void GpuModel::write_block(const TokenBlock& block) {
    block.validate(cfg_.seq_len, cfg_.vocab_size);
    const layout::BlockParams p = encode_block(block);
    params_->upload(&p, sizeof p);
}

gpu::CommandSequence& GpuModel::forward_sequence(int T) {
    auto& seq = sequences_[T];
    if (!seq) {
        seq = std::make_unique<gpu::CommandSequence>(ctx_, options_.timestamps);
        seq->begin();
        record_forward(*seq, T);
        seq->end();
    }
    return *seq;
}

void GpuModel::prepare(int n_tokens) {
    if (n_tokens < 1 || n_tokens > TokenBlock::kMaxTokens) throw std::invalid_argument("a block of 1 to 128 tokens");
    forward_sequence(n_tokens);
}

void GpuModel::forward(const TokenBlock& block) {
    const int T = block.size();
    gpu::CommandSequence* const seq = &forward_sequence(T);
    kv_->settle();  // a kept path's move comes before anything else reads the cache
    seq->wait();   // a previous replay of the same buffer must not still read the parameters
    write_block(block);
    seq->run();
    ++submits_;
    finished_forward(block, *seq);
}

void GpuModel::finished_forward(const TokenBlock& block, const gpu::CommandSequence& seq) {
    ++forwards_;
    last_ = &seq;
    last_dispatches_ = seq.dispatch_count();
    last_barriers_ = seq.barrier_count();
    block_size_ = block.size();
    kv_->wrote(block.base, block.tokens, block.is_causal());
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
    const DecoderLayerWeights& L = layers_.front();
    return "embeddings " + embeddings_.variant() + ", wqkv " + L.wqkv.variant() + ", wo " + L.wo.variant() + ", w1|w3 " +
           L.w13.variant() + ", w2 " + L.w2.variant() + ", classifier " + classifier_.variant();
}

}  // namespace medusa
