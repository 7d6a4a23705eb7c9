// Medusa decoding as a GPU-resident loop: each step (heads -> top-k -> tree gather -> tree
// forward -> acceptance -> KV compaction) is one recorded command buffer and one submit; the
// CPU only reads the step's trace. A one-node tree is plain autoregressive decoding.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "decode/autoregressive.h"
#include "decode/step_trace.h"
#include "decode/tree.h"
#include "llm/gpu_model.h"
#include "llm/medusa_heads.h"

namespace medusa {

struct MedusaOptions {
    AcceptRule rule = AcceptRule::Greedy;
    float temperature = 0.0f;  // for typical and sample
    float typical_eps = 0.09f;    // Medusa's posterior_threshold
    float typical_delta = 0.3f;   // Medusa's posterior_alpha
    uint64_t seed = 0;
    int max_new_tokens = 256;
    std::vector<int> stop_tokens;
    bool timestamps = false;  // per-stage GPU time in each trace
};

class MedusaDecoder {
public:
    // `heads` may be empty only for a one-node tree.
    MedusaDecoder(GpuModel& model, const ModelFile& file, const MedusaHeads& heads, const TreeBuffers& tree,
                  MedusaOptions options);
    ~MedusaDecoder();

    // on_step sees every step (the first, from the prompt, has an empty tree); false stops.
    GenerationStats generate(const std::vector<int>& prompt, const std::function<bool(const StepTrace&)>& on_step);
    int topk() const { return topk_; }
    // A new seed for the next generate(), without re-recording the step.
    void reseed(uint64_t seed) { options_.seed = seed; }

private:
    struct Heads;
    void record_step();
    StepTrace read_trace(int step) const;

    GpuModel& model_;
    const TreeBuffers& tree_;
    MedusaOptions options_;
    int topk_ = 1;
    int n_nodes_ = 1;
    int vocab_stride_ = 0;
    std::unique_ptr<Heads> heads_;
    std::unique_ptr<gpu::Buffer> head_in_, head_tmp_[2], head_logits_, cand_tokens_, cand_probs_, tree_buf_, stats_,
        state_, trace_;
    std::map<std::string, std::unique_ptr<gpu::Kernel>> kernels_;
    std::unique_ptr<gpu::CommandSequence> step_;
    // The last prompt's cache entries stay valid while nobody else runs the model: a repeated
    // prompt (regenerate, sampling statistics) skips its prefill.
    std::vector<int> cached_prompt_;
    std::vector<float> cached_logits_, cached_hidden_;
    uint64_t cached_forward_count_ = 0;
};

}  // namespace medusa
