// EAGLE-3's training loss with training-time test (Li et al., EAGLE-3; SafeAILab's
// traineagle3): the draft layer is unrolled `steps` times over a batch of sequences. Step 0 of
// row i reads the target's fused feature of position i and the token t_{i+1}; step k reads its own
// step k-1 output and the true token t_{i+1+k}, at position i+k, attending to step 0's keys of
// rows up to i and to row i's keys of steps 1..k (what drafting past position i sees). Each step's
// loss is the cross-entropy of its draft distribution against the target's distribution of
// t_{i+2+k} over the draft vocabulary, softmax(target logits of the draft tokens); rows are
// weighted by the batch (SafeAILab weighs step k by 0.8^k and skips positions whose target top
// token the draft vocabulary lacks). This file holds the batch and a plain double-precision
// forward: the reference the GPU trainer's loss and gradients are checked against.
#pragma once
#include <vector>

#include "llm/eagle_layer.h"

namespace medusa::train {

struct Eagle3Batch {
    int rows = 0, seq_len = 0, steps = 0;  // rows = sequences * seq_len; each sequence one causal run
    std::vector<float> features;           // [rows][feature_dim]: the target's fused-layer inputs at i
    std::vector<float> embeddings;         // [steps][rows][dim]: e(t_{i+1+k}), the token step k reads
    std::vector<float> target_hidden;      // [steps][rows][dim]: the target's final-norm state at i+1+k
    std::vector<int> positions;            // [steps][rows]: i + k
    std::vector<float> row_weight;         // [steps][rows]: the loss weight of each row (0: no target)
};

struct Eagle3StepLoss {
    double loss = 0;  // sum over rows of row_weight * cross-entropy
    double unweighted = 0;  // sum of the cross-entropy over rows with weight > 0
    int rows = 0;     // rows with weight > 0
    int top1 = 0;     // of them, rows whose draft top token is the target's
};

// target_head: (draft vocabulary, dim), the target's classifier rows of the draft tokens, frozen.
std::vector<Eagle3StepLoss> eagle3_ttt_loss(const EagleLayer& layer, const std::vector<float>& target_head,
                                            const Eagle3Batch& batch);
double total_loss(const std::vector<Eagle3StepLoss>& steps);

}  // namespace medusa::train
