// How well an EAGLE layer drafts, not teacher-forced: from each position of held-out text the
// layer drafts `depth` tokens greedily, reading at depth k its own predicted feature and the
// token it drafted at depth k-1, and each drafted token is compared with the target model's
// greedy token after the drafted prefix (the target runs the drafted chain). Plain C++ (the CPU
// reference model and the CPU EAGLE layer), so the GPU trainer is measured by another engine.
#pragma once
#include <cstddef>
#include <vector>

#include "llm/eagle_layer.h"
#include "model/model_file.h"
#include "train/self_distill.h"

namespace medusa::train {

struct EagleDraftAccuracy {
    std::vector<double> top1;         // per depth 1..m: drafted token = the target's greedy token on the drafted path
    std::vector<double> conditional;  // per depth: the same, over starts whose earlier depths all agreed
    std::vector<double> accepted;     // per depth: share of starts whose depths 1..k all agree (greedy chain)
    double mean_accepted = 0;         // draft tokens a greedy chain of m accepts per step, on average
    size_t starts = 0;
};

// Starts at every position of data's sequences in order, until max_starts (0: all).
EagleDraftAccuracy eagle_draft_accuracy(const EagleLayer& layer, const ModelFile& target, const DistillData& data,
                                        int depth, size_t max_starts = 0);

}  // namespace medusa::train
