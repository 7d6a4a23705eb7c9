// EAGLE's draft layer on the C++ reference engine.
#pragma once
#include <vector>

#include "llm/cpu_reference.h"
#include "llm/eagle_layer.h"
#include "llm/eagle_runner.h"

namespace medusa {

class CpuEagleRunner : public EagleRunner {
public:
    CpuEagleRunner(CpuReferenceModel& target, const ModelFile& file, const EagleLayer& layer);
    int context() const override { return target_.config().seq_len; }
    void attach() override;
    void restart() override { store_.clear(); }
    void run(const TokenBlock& block, std::span<const int> source) override;
    std::span<const float> logits(int t) override { return model_.logits(t); }
    int rows() const override { return int(store_.size() / dim_); }
    uint64_t submits() const override { return runs_; }

private:
    CpuReferenceModel& target_;
    CpuEagleModel model_;
    int dim_;
    std::vector<float> store_;  // (rows, dim)
    uint64_t runs_ = 0;
};

}  // namespace medusa
