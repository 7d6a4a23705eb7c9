// EAGLE's draft layer on the GPU: each run is one recorded command buffer and one submit that
// expands the tokens' embeddings (the target's table), assembles [e ; feature] rows from the
// target's feature cache or the output store, runs fc (+ bias) and the decoder layer over the
// layer's own KV cache, keeps the predictions in the output store and applies the target's LM head.
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

class GpuEagleRunner : public EagleRunner {
public:
    static constexpr int kStoreRows = 4 * MAX_BLOCK_TOKENS;

    // `attach`: makes the target keep this layer's features (GpuTreeRunner switches them).
    GpuEagleRunner(GpuModel& target, const EagleLayer& layer, std::function<void()> attach = {});
    ~GpuEagleRunner() override;
    int context() const override { return target_.config().seq_len; }
    void attach() override;
    void restart() override { rows_ = 0; }
    void run(const TokenBlock& block, std::span<const int> source) override;
    void prepare(int n_tokens) override { sequence(n_tokens); }
    std::span<const float> logits(int t) override;
    int rows() const override { return rows_; }
    uint64_t submits() const override { return submits_; }

private:
    gpu::CommandSequence& sequence(int n_tokens);

    GpuModel& target_;
    std::function<void()> attach_;
    uint64_t feature_version_ = 0;  // of the feature cache the sequences bind (recorded again once replaced)
    DecoderShape shape_;
    int vocab_;
    GpuMatrix fc_;
    std::unique_ptr<gpu::Buffer> fc_bias_;
    DecoderLayerWeights layer_;
    std::unique_ptr<KvCache> kv_;
    std::unique_ptr<MatmulRecorder> matmuls_;
    std::unique_ptr<DecoderLayerRecorder> recorder_;
    std::unique_ptr<gpu::Buffer> params_, inputs_, emb_, x_in_, x_, qkv_, att_out_, hb_, scores_, store_, logits_;
    std::unique_ptr<gpu::Kernel> input_kernel_, store_kernel_, bias_kernel_;
    std::map<int, std::unique_ptr<gpu::CommandSequence>> sequences_;  // by block size
    int rows_ = 0, block_size_ = 0;
    uint64_t submits_ = 0;
};

}  // namespace medusa
