#include "llm/gpu_medusa_heads.h"

#include <stdexcept>
#include <string>

#include "layouts/medusa_gather_map.h"
#include "llm/kernel_params.h"

namespace medusa {

using namespace kernels;

namespace {

GpuMatrix upload_stacked(gpu::Context& ctx, const std::vector<Tensor>& views) {
    std::vector<const Tensor*> parts;
    for (const Tensor& v : views) parts.push_back(&v);
    return upload_matrix(ctx, parts);
}

std::unique_ptr<gpu::Buffer> device_buffer(gpu::Context& ctx, size_t bytes) {
    auto b = std::make_unique<gpu::Buffer>(ctx, bytes, gpu::MemoryKind::Device);
    b->fill_zero();
    return b;
}

}  // namespace

GpuMedusaHeads::GpuMedusaHeads(GpuModel& model, const ModelFile& file, const MedusaHeads& heads, int depth, int topk,
                               std::span<const int> candidate)
    : model_(model), depth_(depth), topk_(topk), nodes_(int(candidate.size())) {
    gpu::Context& ctx = model.context();
    const LlamaConfig& cfg = model.config();
    heads.check_fits(cfg);
    if (depth < 1 || depth > heads.count())
        throw std::invalid_argument("a Medusa stage of depth " + std::to_string(depth) + " needs that many heads, " +
                                    std::to_string(heads.count()) + " are loaded");
    if (topk < 1 || topk > 32) throw std::invalid_argument("Medusa candidates per head must be 1..32");
    if (nodes_ < 1 || nodes_ > MAX_BLOCK_TOKENS) throw std::invalid_argument("a Medusa tree has 1 to 128 nodes");
    for (int c : candidate)
        if (c < 0 || c > depth * topk) throw std::invalid_argument("a Medusa tree node outside the candidate list");

    for (int l = 0; l < heads.layers; ++l) {
        std::vector<Tensor> views;
        std::vector<float> bias;
        for (int k = 0; k < depth; ++k) {
            views.push_back(f32_tensor("medusa head", heads.heads[k].w1[l], {cfg.dim, cfg.dim}));
            bias.insert(bias.end(), heads.heads[k].b1[l].begin(), heads.heads[k].b1[l].end());
        }
        w1_.push_back(upload_stacked(ctx, views));
        b1_.push_back(device_buffer(ctx, bias.size() * 4));
        b1_.back()->upload(bias.data(), bias.size() * 4);
    }
    shares_classifier_ = true;
    for (int k = 0; k < depth; ++k) shares_classifier_ &= heads.w2_is_classifier(k, file);
    if (!shares_classifier_) {
        std::vector<Tensor> views;
        for (int k = 0; k < depth; ++k) views.push_back(f32_tensor("medusa head", heads.heads[k].w2, {cfg.vocab_size, cfg.dim}));
        w2_ = upload_stacked(ctx, views);
    }
    vocab_stride_ = (cfg.vocab_size + 63) / 64 * 64;  // keeps each head's logits 256-byte aligned
    tmp_[0] = device_buffer(ctx, size_t(depth) * cfg.dim * 4);
    tmp_[1] = device_buffer(ctx, size_t(depth) * cfg.dim * 4);
    logits_ = device_buffer(ctx, size_t(depth) * vocab_stride_ * 4);
    cand_tokens_ = device_buffer(ctx, size_t(1 + depth * topk) * 4);
    cand_probs_ = device_buffer(ctx, size_t(1 + depth * topk) * 4);
    layout::MedusaGatherMap map{};
    map.nodes = uint32_t(nodes_);
    for (int i = 0; i < nodes_; ++i) map.candidate[i] = uint32_t(candidate[i]);
    map_ = device_buffer(ctx, sizeof map);
    map_->upload(&map, sizeof map);
    // The stride keeps each head's logits whole texels.
    const bool texel = logits_->texel_view(gpu::TexelFormat::F32x4) != VK_NULL_HANDLE;
    topk_kernel_ =
        std::make_unique<gpu::Kernel>(ctx, medusa_topk_shader(texel), medusa_topk_bindings(texel), sizeof(TopkPush));
    gather_kernel_ = std::make_unique<gpu::Kernel>(ctx, gpu::Shader::medusa_gather, 5, 0);
}

void GpuMedusaHeads::record(gpu::CommandSequence& seq, const gpu::Buffer& last_hidden, gpu::Buffer& block_params,
                            gpu::Buffer& probs) const {
    const LlamaConfig& cfg = model_.config();
    const uint32_t dim = cfg.dim, vocab = cfg.vocab_size, K = uint32_t(depth_);
    MatmulRecorder& mm = model_.matmuls();
    seq.stage("heads");
    // Every head starts from the same hidden state (input stride 0), then reads its own row.
    const gpu::Buffer* x = &last_hidden;
    uint32_t x_stride = 0;
    for (size_t l = 0; l < w1_.size(); ++l) {
        const gpu::Buffer* y = tmp_[l % 2].get();
        mm.record(seq, {.w = &w1_[l], .x = x, .y = y, .extra = b1_[l].get(), .flags = kMatmulResblock,
                        .out_rows = int(K * dim), .tokens = 1, .x_stride = x_stride, .y_stride = dim,
                        .block_rows = int(dim)});
        x = y;
        x_stride = dim;
    }
    if (shares_classifier_)  // K rows through the classifier, as a block of K tokens
        mm.record(seq, {.w = &model_.classifier(), .x = x, .y = logits_.get(), .out_rows = int(vocab), .tokens = int(K),
                        .x_stride = x_stride, .y_stride = uint32_t(vocab_stride_)});
    else
        mm.record(seq, {.w = &w2_, .x = x, .y = logits_.get(), .out_rows = int(K * vocab), .tokens = 1,
                        .x_stride = x_stride, .y_stride = uint32_t(vocab_stride_), .block_rows = int(vocab)});
    seq.stage("topk");
    const TopkPush topk{vocab, uint32_t(vocab_stride_), uint32_t(topk_)};
    if (topk_kernel_->num_buffers() == 4)
        seq.dispatch(*topk_kernel_,
                     {*logits_, *cand_tokens_, *cand_probs_, gpu::texel(*logits_, gpu::TexelFormat::F32x4)}, topk, K);
    else
        seq.dispatch(*topk_kernel_, {*logits_, *cand_tokens_, *cand_probs_}, topk, K);
    seq.stage("gather");
    seq.dispatch_raw(*gather_kernel_, {*map_, *cand_tokens_, *cand_probs_, block_params, probs}, nullptr, 0, 1);
}

}  // namespace medusa
