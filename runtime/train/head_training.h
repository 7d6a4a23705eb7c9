// Medusa-1 training over self-distilled data: batches of positions, loss
// sum_k 0.8^k CE(head_k(h_t), y_{t+k+2}) (head k guesses k+1 tokens past the model's next one),
// AdamW, as an objective of a TrainingRun; and per-head accuracy on held-out text.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpu/context.h"
#include "llm/medusa_heads.h"
#include "train/head_reference.h"
#include "train/checkpoint_identity.h"
#include "train/self_distill.h"
#include "train/training_objective.h"
#include "train/training_run.h"

namespace medusa::train {

// Head k's target for position p (index into data.tokens), or -1 past its sequence's end.
int head_target(const DistillData& data, const std::vector<int>& seq_of, size_t p, int k);

struct HeadAccuracy {
    std::vector<double> loss, top1, top5;         // per head
    std::vector<std::vector<double>> rank_share;  // per head: share of positions whose target has rank i (i < 10)
    size_t positions = 0;
};

// Forward only, over every position of `data` with a target for head 0.
HeadAccuracy evaluate_heads(gpu::Context& ctx, const MedusaHeads& heads, const DistillData& data, int batch = 256);

struct TrainResult {
    MedusaHeads heads;
    int steps_done = 0;      // this run (fewer than o.steps when resumed)
    double wall_s = 0;
    double positions_per_s = 0;  // training positions per second (each trains all K heads)
};

class GpuHeadTrainer;

// Medusa-1's objective: positions drawn from the whole text, each training all K heads.
class HeadsObjective : public TrainingObjective {
public:
    // Keeps references to `init` and `data`; o: the batch and AdamW's decay and clipping.
    HeadsObjective(gpu::Context& ctx, const MedusaHeads& init, const DistillData& data, const TrainOptions& o);
    ~HeadsObjective() override;
    int start(const ResumeFrom& from) override;
    size_t step(int step, float lr, std::mt19937_64& rng) override;
    std::string progress(int steps) override;
    const char* speed_unit() const override { return "tok/s"; }
    void save(const std::string& dir, const CheckpointStamp& stamp) const override;
    MedusaHeads heads() const;  // the current parameters

private:
    gpu::Context& ctx_;
    const MedusaHeads& init_;
    const DistillData& data_;
    std::vector<int> seq_of_;
    std::vector<size_t> pos_;
    std::unique_ptr<GpuHeadTrainer> trainer_;
    AdamW opt_;
    std::vector<size_t> chunk_;
    std::vector<float> h_;
    std::vector<int> targets_;
    std::vector<double> loss_, top1_;
    double norm_ = 0;
};

TrainResult train_heads(gpu::Context& ctx, const MedusaHeads& init, const DistillData& data, const TrainOptions& o,
                        const LogFn& log = {});

}  // namespace medusa::train
