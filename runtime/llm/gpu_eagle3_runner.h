// EAGLE-3's draft layer on the GPU (see llm/eagle_layer.h): each run is one recorded command
// buffer and one submit. A block of target features gathers the fused layers' inputs from the
// target's feature cache, normalises them where the layer says so, and applies fc (or takes a
// single layer as it is); a block of deeper
// levels gathers the layer's own earlier outputs. Then [input_norm(e) ; hidden_norm(h)] feeds
// q|k|v over the layer's own KV cache, h is the residual, the outputs go to the output store,
// and the draft head's logits over the draft vocabulary come back to the host, where logits()
// places them at their target ids.
#pragma once
#include <functional>
#include <map>
#include <memory>

#include "gpu/buffer.h"
#include "gpu/command_sequence.h"
#include "gpu/kernel.h"
#include "llm/decoder_layer.h"
#include "llm/eagle_layer.h"
#include "llm/eagle_runner.h"
#include "llm/gpu_model.h"

namespace medusa {

class GpuEagle3Runner : public EagleRunner {
public:
    static constexpr int kStoreRows = 4 * MAX_BLOCK_TOKENS;

    // `attach`: makes the target keep this layer's features (GpuTreeRunner switches them).
    GpuEagle3Runner(GpuModel& target, const EagleLayer& layer, std::function<void()> attach = {});
    ~GpuEagle3Runner() override;
    int context() const override { return target_.config().seq_len; }
    void attach() override;
    void restart() override { rows_ = 0; }
    void run(const TokenBlock& block, std::span<const int> source) override;
    void prepare(int n_tokens) override;
    std::span<const float> logits(int t) override;
    int rows() const override { return rows_; }
    uint64_t submits() const override { return submits_; }

private:
    gpu::CommandSequence& sequence(int n_tokens, bool from_target);

    GpuModel& target_;
    std::function<void()> attach_;
    uint64_t feature_version_ = 0;  // of the feature cache the sequences bind (recorded again once replaced)
    DecoderShape shape_;
    float eps_;
    int vocab_, draft_vocab_, feature_dim_;
    bool fuses_;
    std::vector<int> draft_to_target_;
    GpuMatrix fc_, head_;
    DecoderLayerWeights layer_;
    std::unique_ptr<gpu::Buffer> input_norm_, hidden_norm_, final_norm_;
    std::unique_ptr<gpu::Buffer> feature_norm_, normed_feature_;  // with a norm before fc only
    std::unique_ptr<KvCache> kv_;
    std::unique_ptr<MatmulRecorder> matmuls_;
    std::unique_ptr<DecoderLayerRecorder> recorder_;
    std::unique_ptr<gpu::Buffer> params_, inputs_, emb_, gathered_, x_, x_in_, qkv_, att_out_, hb_, scores_, store_,
        normed_, draft_logits_;
    std::unique_ptr<gpu::Kernel> gather_kernel_, input_kernel_, store_kernel_, rmsnorm_kernel_;
    std::map<std::pair<int, bool>, std::unique_ptr<gpu::CommandSequence>> sequences_;  // by size, source
    std::vector<float> logits_;       // (T, vocab) of the last run, filled on demand
    std::vector<uint8_t> placed_;     // which rows of logits_ are filled
    int rows_ = 0, block_size_ = 0;
    uint64_t submits_ = 0;
};

}  // namespace medusa
