// The TreeRunner of a GpuModel: each verify pass is one recorded command buffer and one queue
// submit, holding in order the compaction of the last accepted path (when it moved anything),
// the hand-over of the last accepted hidden state and a drafter's stage (when one drafts), the
// forward over the tree, and the per-node statistics (when the acceptance rule reads them).
// Command buffers are recorded once per such shape and replayed.
#pragma once
#include <chrono>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "gpu/buffer.h"
#include "gpu/command_sequence.h"
#include "gpu/kernel.h"
#include "llm/gpu_medusa_heads.h"
#include "llm/gpu_model.h"
#include "llm/tree_runner.h"

namespace medusa {

// Which runs have their stages timed by timestamp queries (stage_ms). The queries cost time of
// their own (on lavapipe a small model's step took three times as long), so a window that shows
// the times a few times a second times a run now and then.
enum class StageTiming { Off, EveryRun, Sampled };

class GpuTreeRunner : public TreeRunner {
public:
    // Timing other than Off needs a device with timestamps (gpu::Context::timestamps_supported).
    explicit GpuTreeRunner(GpuModel& model, StageTiming timing = StageTiming::Off);
    ~GpuTreeRunner() override;

    const LlamaConfig& config() const override { return model_.config(); }
    const char* engine_name() const override { return model_.engine_name(); }
    std::span<const int> cached_tokens() const override { return model_.kv_cache().valid_tokens(); }
    int reusable_prefix(int shared) const override { return model_.kv_cache().reusable(shared); }
    void prefill(int base, std::span<const int> tokens) override;
    void run(const TokenBlock& block, const TreeRunOptions& options) override;
    void prepare(int n_tokens, const DraftStage* stage) override;
    std::span<const int> tokens() const override { return tokens_; }
    int argmax(int node) override { return model_.argmax(node); }
    std::span<const float> logits(int node) override { return model_.logits(node); }
    NodeStats stats(int node) const override;
    std::span<const float> draft_probs() const override { return draft_probs_; }
    std::vector<std::pair<std::string, double>> stage_ms() const override;
    void keep_path(std::span<const int> path) override;
    uint64_t submits() const override { return submits_; }
    std::unique_ptr<DraftStage> medusa_stage(const ModelFile& file, const MedusaHeads& heads, int depth, int topk,
                                             std::span<const int> candidate) override;
    std::unique_ptr<EagleRunner> eagle_runner(const ModelFile& file, const EagleLayer& layer) override;

private:
    // (block size, compaction, stage serial or 0, stats temperature or -1, timed)
    using Shape = std::tuple<int, bool, uint64_t, float, bool>;
    gpu::CommandSequence& sequence(const Shape& shape, const DraftStage* stage);
    // What the target's feature cache keeps (GpuModel::capture_layer_inputs), re-recording here.
    void capture_layer_inputs(const std::vector<int>& layers);

    GpuModel& model_;
    StageTiming timing_;
    std::chrono::steady_clock::time_point last_timed_{};  // the last timed run's start (Sampled)
    bool last_run_timed_ = false;
    std::unique_ptr<gpu::Buffer> last_hidden_, stats_, probs_;
    std::unique_ptr<gpu::Kernel> select_row_, node_stats_;
    uint32_t stats_width_ = 0;  // node_stats.comp's lanes a row (logit_row_width), 0 for a subgroup a row
    std::map<Shape, std::unique_ptr<gpu::CommandSequence>> sequences_;
    DraftStages<GpuMedusaHeads> stages_;
    const gpu::CommandSequence* last_ = nullptr;
    TokenBlock block_;  // the last run's, with the tokens it ran with
    std::vector<int> tokens_;
    std::vector<float> draft_probs_;
    std::vector<NodeStats> stats_read_;
    uint64_t submits_ = 0;
    uint64_t own_forward_ = ~0ull;  // the model's forward count after our last run
};

}  // namespace medusa
