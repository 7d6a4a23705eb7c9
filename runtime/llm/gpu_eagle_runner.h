// EAGLE's draft layer on the GPU: each run is one recorded command buffer and one submit that
// expands the tokens' embeddings (the target's table), assembles [e ; feature] rows from the
// target's feature cache or the output store, runs fc (+ bias) and the decoder layer over the
// layer's own KV cache, keeps the predictions in the output store and applies the target's LM head.
#pragma once
#include <functional>
#include <memory>

#include "llm/gpu_eagle_runner_base.h"

namespace medusa {

class GpuEagleRunner : public GpuEagleRunnerBase {
public:
    GpuEagleRunner(GpuModel& target, const EagleLayer& layer, std::function<void()> attach = {});
    ~GpuEagleRunner() override;
    std::span<const float> logits(int t) override;

private:
    LayerInput record_input(gpu::CommandSequence& seq, int n_tokens, int variant) override;
    void record_head(gpu::CommandSequence& seq, int n_tokens) override;

    GpuMatrix fc_;
    std::unique_ptr<gpu::Buffer> fc_bias_, x_in_, logits_;
    std::unique_ptr<gpu::Kernel> input_kernel_, bias_kernel_;
};

}  // namespace medusa
