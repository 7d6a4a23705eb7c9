// Medusa-2's joint training on the GPU: the whole backbone runs in f32 over a batch of
// teacher-forced sequences with its base weights frozen in one device buffer, LoRA adapters on
// the seven linears of every layer, the Medusa heads on the final hidden states. The backbone is
// the engines' forward pass with every feature of the model's family (q/k/v biases, per-head q/k
// norms, post-norms, GeGLU, the embedding scale, partial and scaled RoPE with factor tables, each
// layer's RoPE base and sliding window, the attention scale), forward and backward. One recorded
// command buffer computes the base model's logits (the adapters left out), the tuned forward,
// the loss KL(p_base || p_tuned) + lambda sum_k 0.8^k CE_k, the backward through the heads and
// every layer (the reusable pieces of train_kernels.h), and two AdamW updates: the adapters and
// the heads are two OptimizerStates, so each has its own learning rate and clipping norm.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "gpu/buffer.h"
#include "gpu/command_sequence.h"
#include "gpu/context.h"
#include "llm/medusa_heads.h"
#include "train/backbone_weights.h"
#include "train/head_reference.h"
#include "train/head_stack_pass.h"
#include "train/joint_reference.h"
#include "train/lora.h"
#include "train/optimizer_state.h"
#include "train/step_sequences.h"
#include "train/train_kernels.h"

namespace medusa::train {

struct JointBatchStats {
    double kl = 0;                  // mean KL(p_base || p_tuned) over rows with a weight, nats/token
    int rows = 0;                   // rows with a weight
    int agree = 0;                  // of them, rows whose top token is the base's
    std::vector<double> head_loss;  // per head: mean CE over rows with a target
    std::vector<int> head_valid, head_top1;
    double lora_grad_norm = 0, heads_grad_norm = 0;  // before clipping (training steps only)
};

class GpuJointTrainer {
public:
    GpuJointTrainer(gpu::Context& ctx, const BackboneWeights& base, const LoraConfig& lc,
                    const std::vector<float>& lora_init, const MedusaHeads& heads_init, int sequences, int seq_len,
                    TrainMatmul matmul = TrainMatmul::Auto);
    ~GpuJointTrainer();

    int rows() const { return rows_; }
    // Gradients of the batch's loss and, with `update`, one AdamW step of each (step counts from 1).
    JointBatchStats step(const JointBatch& b, const AdamW& lora_opt, const AdamW& heads_opt, int step,
                         bool update = true);
    // Forward only; also leaves the tuned and base logits readable.
    JointBatchStats evaluate(const JointBatch& b);
    std::vector<float> logits(bool base) const;  // [rows][vocab] of the last evaluate()

    // 0 params, 1 grads, 2 first moment, 3 second moment
    std::vector<float> lora_flat(int which) const;
    void set_lora_flat(int which, const std::vector<float>& v);
    std::vector<float> heads_flat(int which) const;
    void set_heads_flat(int which, const std::vector<float>& v);
    MedusaHeads heads() const;
    std::vector<MedusaHead> head_gradients() const;
    std::vector<gpu::StageTime> stage_times() const;  // GPU time per stage of the last training step

private:
    void record(gpu::CommandSequence& s, bool backward, bool update);
    void forward(gpu::CommandSequence& s, bool with_lora, const gpu::Buffer& logits);
    void backward(gpu::CommandSequence& s);
    void lora_forward(gpu::CommandSequence& s, int layer, int t, Mat x, Mat y);
    void lora_backward(gpu::CommandSequence& s, int layer, int t, Mat x, Mat dy, Mat dx);
    void write_inputs(const JointBatch& b, const AdamW& lora_opt, const AdamW& heads_opt, int step);
    JointBatchStats read_stats(const JointBatch& b) const;

    struct Offsets {  // of the frozen base weights in base_
        std::vector<uint32_t> attn_norm, wqkv, bqkv, q_norm, k_norm, wo, post_attn_norm, ffn_norm, w13, w2,
            post_ffn_norm;
        uint32_t norm = 0, classifier = 0, rope_factors = 0;
    };
    // What the backward reads of each layer's forward. qkv_raw (q/k norms only): the projections
    // before the norms; o and down (post-norms only): the projections before their norms.
    struct LayerActs {
        std::unique_ptr<gpu::Buffer> x, n1, r1, qkv_raw, rq, rk, qkv, att, lse, o, ro, h, n2, r2, gu, a, down, rd;
    };
    layout::TrainRopePush rope_push(int layer, float direction) const;
    layout::TrainAttentionPush attention_push(int layer) const;
    layout::TrainRmsnormPush head_norm_push(bool k, bool accumulate) const;

    LlamaConfig cfg_;
    LoraConfig lc_;
    LoraLayout at_;
    MedusaHeads shape_;
    int seq_len_, rows_;
    TrainKernels k_;
    OptimizerState lora_, heads_;  // heads_' step parameters: AdamW's, then one loss scale per head
    HeadStackPass head_pass_;
    Offsets off_;
    bool has_factors_ = false;  // base_ holds RoPE factors at off_.rope_factors
    std::vector<float> embeddings_;  // (vocab, dim): the rows are gathered on the host
    std::unique_ptr<gpu::Buffer> base_;
    std::unique_ptr<gpu::Buffer> x0_, positions_, row_w_, targets_, stats_, head_stats_;
    std::vector<LayerActs> acts_;
    std::unique_ptr<gpu::Buffer> x_final_, nf_, rf_, logits_, base_logits_, self_logits_;
    std::unique_ptr<gpu::Buffer> lora_u_, lora_t_, lora_du_, lora_dt_;
    std::unique_ptr<gpu::Buffer> d_x_, d_h_, d_a_, d_gu_, d_n_, d_att_, d_qkv_, d_nf_, d_y_, d_qkv_raw_, post_;
    std::unique_ptr<StepSequences> seqs_;
};

}  // namespace medusa::train
