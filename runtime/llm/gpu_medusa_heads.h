// K Medusa heads on the GPU as one drafting stage: each residual layer of every head stacked
// into one matrix (one dispatch per layer for all heads), the vocabulary projections stacked
// too (or the model's classifier once over K rows when the heads share it), each head's top-k,
// and the gather that lays the candidates into the verify block.
#pragma once
#include <memory>
#include <span>
#include <vector>

#include "gpu/buffer.h"
#include "gpu/command_sequence.h"
#include "gpu/kernel.h"
#include "llm/gpu_model.h"
#include "llm/medusa_heads.h"

namespace medusa {

class GpuMedusaHeads {
public:
    // Heads 0 .. depth-1 of `heads`; candidate[i] is tree node i's entry of the candidate list.
    GpuMedusaHeads(GpuModel& model, const ModelFile& file, const MedusaHeads& heads, int depth, int topk,
                   std::span<const int> candidate);
    int nodes() const { return nodes_; }
    // Drafts from `last_hidden` (dim floats) into the block in `block_params`; writes each
    // node's head probability into `probs` (layouts/medusa_gather_map.h DraftProbs).
    void record(gpu::CommandSequence& seq, const gpu::Buffer& last_hidden, gpu::Buffer& block_params,
                gpu::Buffer& probs) const;

private:
    GpuModel& model_;
    int depth_, topk_, nodes_, vocab_stride_;
    std::vector<GpuMatrix> w1_;  // per residual layer: every head's W1 stacked (depth * dim rows)
    std::vector<std::unique_ptr<gpu::Buffer>> b1_;
    GpuMatrix w2_;                    // stacked projections, empty when every head shares the classifier
    bool shares_classifier_ = false;  // then the classifier runs once over `depth` rows of input
    std::unique_ptr<gpu::Buffer> tmp_[2], logits_, cand_tokens_, cand_probs_, map_;
    std::unique_ptr<gpu::Kernel> topk_kernel_, gather_kernel_;
};

}  // namespace medusa
