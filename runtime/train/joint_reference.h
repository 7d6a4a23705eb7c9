// Plain C++ (double) forward and backward of Medusa-2's joint loss on a batch of teacher-forced
// sequences, composed of the reference pieces (backward_reference.h): the backbone with every
// feature of its family as llm/cpu_reference.cpp runs it (q/k/v biases, q/k norms, post-norms,
// GeGLU, the embedding scale, partial and scaled RoPE with factor tables, each layer's RoPE base
// and sliding window, the attention scale) and LoRA on its seven linears per layer, the KL divergence from the base model's next-token distribution
// (sum over rows of row_weight * KL(p_base || p_tuned)), plus the heads' loss
// sum_k scale_k sum_rows CE(head_k(h), target) on the tuned final hidden states h. The reference
// the GPU joint trainer is checked against.
#pragma once
#include <vector>

#include "llm/medusa_heads.h"
#include "train/backbone_weights.h"
#include "train/lora.h"

namespace medusa::train {

struct JointBatch {
    int sequences = 0, seq_len = 0;  // rows = sequences * seq_len; each sequence one causal run of
                                     // consecutive positions (sliding windows count rows)
    std::vector<int> tokens;         // [rows]: the input token of each row
    std::vector<int> positions;      // [rows]
    std::vector<float> row_weight;   // [rows]: the KL term's weight (1 / rows with a target; 0: padding)
    std::vector<int> head_targets;   // [K][rows]: head k's target (< 0: none)
    std::vector<float> head_scale;   // [K]: lambda 0.8^k / (rows with a target for head k)
    int rows() const { return sequences * seq_len; }
};

struct JointReferenceResult {
    double kl = 0;          // sum over rows of row_weight * KL
    double heads_loss = 0;  // sum over heads of scale_k * sum of CE
    std::vector<double> logits, base_logits;  // [rows][vocab]
    std::vector<double> lora_grad;            // d(kl + heads_loss) / d(LoRA parameters)
    std::vector<MedusaHead> head_grad;
};

JointReferenceResult joint_forward_backward(const BackboneWeights& base, const std::vector<double>& lora,
                                            const LoraConfig& lc, const MedusaHeads& heads, const JointBatch& b,
                                            bool want_grad = true);

}  // namespace medusa::train
