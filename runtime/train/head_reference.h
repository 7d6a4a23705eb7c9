// Plain C++ forward and backward of one Medusa head on a batch: the reference the GPU training
// kernels are checked against (and which is itself checked against finite differences).
#pragma once
#include <vector>

#include "llm/medusa_heads.h"

namespace medusa::train {

struct HeadBatchResult {
    double loss = 0;   // scale * sum over valid rows of CE
    int valid = 0;     // rows with a target
    int top1 = 0, top5 = 0;
    std::vector<int> ranks;  // per row, -1 without a target
    MedusaHead grad;         // d(loss)/d(parameters), same shapes as the head
    std::vector<double> dh;  // [rows][dim]: d(loss)/dh (with want_grad)
};

// Rows of `h` are [rows][dim] hidden states; targets < 0 are ignored. The loss is
// scale * sum_b CE(head_k(h_b), target_b) (the trainer uses scale = 0.8^k / valid rows).
HeadBatchResult head_forward_backward(const MedusaHeads& heads, int k, const std::vector<float>& h,
                                      const std::vector<int>& targets, float scale, bool want_grad = true);
// The same for hidden states in double (Medusa-2's reference backbone feeds them).
HeadBatchResult head_forward_backward(const MedusaHeads& heads, int k, const std::vector<double>& h,
                                      const std::vector<int>& targets, float scale, bool want_grad = true);

// The decay weight of head k in the Medusa-1 loss: 0.8^k.
inline float head_weight(int k) {
    float w = 1.0f;
    for (int i = 0; i < k; ++i) w *= 0.8f;
    return w;
}

// One AdamW step on flat vectors, as shaders/train_adamw.comp does it (step counts from 1).
struct AdamW {
    float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.0f, clip = 1.0f;
};
void adamw_step(std::vector<float>& p, const std::vector<float>& g, std::vector<float>& m, std::vector<float>& v,
                const AdamW& o, int step);

}  // namespace medusa::train
