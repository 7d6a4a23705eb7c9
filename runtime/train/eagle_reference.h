// Plain C++ forward and backward of EAGLE's training loss on a batch of sequences, composed of
// the reference pieces (backward_reference.h): the reference the GPU trainer is checked against.
// For position i of a sequence the layer reads [e(t_{i+1}) ; f_i] and predicts f_{i+1}; the loss
// is feature * SmoothL1(f-hat, f_{i+1}) (mean over the hidden size) + token * CE(p, p-hat), with
// p = softmax(lm_head(f_{i+1})) the target's own distribution of token i+2 and
// p-hat = softmax(lm_head(f-hat)), summed over rows with the batch's row weights.
#pragma once
#include <vector>

#include "llm/eagle_layer.h"

namespace medusa::train {

struct EagleBatch {
    int rows = 0, seq_len = 0;      // rows = sequences * seq_len; each sequence one causal run
    std::vector<float> input;       // [rows][2 dim]: e(t_{i+1}), then f_i (noise included)
    std::vector<float> target;      // [rows][dim]: f_{i+1}
    std::vector<int> positions;     // [rows]: i
    std::vector<float> row_weight;  // [rows]: 1 / (rows with a target), 0 for padding
};

struct EagleLossWeights {
    float feature = 1.0f;  // EAGLE's v_w
    float token = 0.1f;    // EAGLE's p_w
    float beta = 1.0f;     // SmoothL1's threshold (PyTorch's default)
};

struct EagleReferenceResult {
    double feature_loss = 0, token_loss = 0;  // weighted sums over rows (loss = their sum)
    std::vector<double> out;                  // [rows][dim]: f-hat
    std::vector<int> rank;                    // per row: rank of the target's top token under p-hat
    EagleLayer grad;                          // d loss / d parameters
};

// lm_head: the target's (vocab, dim) output matrix, frozen.
EagleReferenceResult eagle_forward_backward(const EagleLayer& layer, const std::vector<float>& lm_head, int vocab,
                                            const EagleBatch& batch, const EagleLossWeights& w, bool want_grad = true);

}  // namespace medusa::train
