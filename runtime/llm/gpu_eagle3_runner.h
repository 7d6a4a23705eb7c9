// EAGLE-3's draft layer on the GPU (see llm/eagle_layer.h): each run is one recorded command
// buffer and one submit. A block of target features gathers the fused layers' inputs from the
// target's feature cache, normalises them where the layer says so, and applies fc (or takes a
// single layer as it is); a block of deeper levels gathers the layer's own earlier outputs. Then
// [input_norm(e) ; hidden_norm(h)] feeds q|k|v over the layer's own KV cache, h is the residual,
// the outputs go to the output store, and the draft head's logits over the draft vocabulary come
// back to the host, where logits() places them at their target ids.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "llm/gpu_eagle_runner_base.h"

namespace medusa {

class GpuEagle3Runner : public GpuEagleRunnerBase {
public:
    GpuEagle3Runner(GpuModel& target, const EagleLayer& layer, std::function<void()> attach = {});
    ~GpuEagle3Runner() override;
    std::span<const float> logits(int t) override;

private:
    // A block's features come from the target (its fused layers' inputs) or from the store.
    enum Source { FromStore = 0, FromTarget = 1 };
    LayerInput record_input(gpu::CommandSequence& seq, int n_tokens, int variant) override;
    void record_head(gpu::CommandSequence& seq, int n_tokens) override;
    int variants() const override { return 2; }
    int variant(std::span<const int> source) const override;
    void ran(int n_tokens) override;

    float eps_;
    int draft_vocab_, feature_dim_;
    bool fuses_;
    std::vector<int> draft_to_target_;
    GpuMatrix fc_, head_;
    std::unique_ptr<gpu::Buffer> input_norm_, hidden_norm_, final_norm_;
    std::unique_ptr<gpu::Buffer> feature_norm_, normed_feature_;  // with a norm before fc only
    std::unique_ptr<gpu::Buffer> gathered_, x_in_, normed_, draft_logits_;
    std::unique_ptr<gpu::Kernel> gather_kernel_, input_kernel_, rmsnorm_kernel_;
    std::vector<float> logits_;    // (T, vocab) of the last run, filled on demand
    std::vector<uint8_t> placed_;  // which rows of logits_ are filled
};

}  // namespace medusa
