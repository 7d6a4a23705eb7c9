// The TreeRunner of the plain C++ reference model: the same interface as the GPU's, so every
// decoding mode runs on the CPU too (--cpu), and tests compare the two engines step by step.
#pragma once
#include <optional>
#include <vector>

#include "llm/cpu_reference.h"
#include "llm/tree_runner.h"

namespace medusa {

class CpuMedusaHeads;

class CpuTreeRunner : public TreeRunner {
public:
    explicit CpuTreeRunner(CpuReferenceModel& model);
    ~CpuTreeRunner() override;

    const LlamaConfig& config() const override { return model_.config(); }
    const char* engine_name() const override { return model_.engine_name(); }
    std::span<const int> cached_tokens() const override { return model_.valid_tokens(); }
    void prefill(int base, std::span<const int> tokens) override;
    void run(const TokenBlock& block, const TreeRunOptions& options) override;
    std::span<const int> tokens() const override { return block_.tokens; }
    int argmax(int node) override { return model_.argmax(node); }
    std::span<const float> logits(int node) override { return model_.logits(node); }
    NodeStats stats(int node) const override;
    std::span<const float> draft_probs() const override { return draft_probs_; }
    std::vector<std::pair<std::string, double>> stage_ms() const override { return {}; }
    void keep_path(std::span<const int> path) override;
    uint64_t submits() const override { return forwards_; }
    std::unique_ptr<DraftStage> medusa_stage(const ModelFile& file, const MedusaHeads& heads, int depth, int topk,
                                             std::span<const int> candidate) override;
    std::unique_ptr<EagleRunner> eagle_runner(const ModelFile& file, const EagleLayer& layer) override;

private:
    CpuReferenceModel& model_;
    TokenBlock block_;
    std::vector<float> last_hidden_;  // of the last kept node
    std::vector<float> draft_probs_;
    std::optional<float> stats_temperature_;  // NodeStats are computed when first asked for
    mutable std::vector<std::optional<NodeStats>> stats_;
    uint64_t forwards_ = 0;
    DraftStages<CpuMedusaHeads> stages_;
};

}  // namespace medusa
