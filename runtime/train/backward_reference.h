// Plain C++ forward and backward of the reusable training pieces (linear with bias, LoRA, RMSNorm,
// RoPE, causal grouped-query attention, SwiGLU, SmoothL1, soft-target cross-entropy), in double:
// the reference the backward shaders are checked against, itself checked against finite
// differences. Matrices are row-major vectors; rows are a batch of token positions.
#pragma once
#include <vector>

namespace medusa::train::ref {

using Vec = std::vector<double>;

// Y = X W^T + b: X [rows][in], W [out][in], b [out] (empty: no bias).
Vec linear(const Vec& x, const Vec& w, const Vec& b, int rows, int in, int out);
struct LinearGrads {
    Vec dx, dw, db;  // db empty without a bias
};
LinearGrads linear_backward(const Vec& x, const Vec& w, const Vec& dy, int rows, int in, int out, bool bias);

// LoRA: Y = X W^T + scale (X A^T) B^T, A [rank][in], B [out][rank]; W frozen (no dW).
Vec lora_linear(const Vec& x, const Vec& w, const Vec& a, const Vec& b, int rows, int in, int out, int rank,
                double scale);
struct LoraGrads {
    Vec dx, da, db;
};
LoraGrads lora_linear_backward(const Vec& x, const Vec& w, const Vec& a, const Vec& b, const Vec& dy, int rows, int in,
                               int out, int rank, double scale);

// y = g x r, r = 1/sqrt(mean(x^2) + eps) per row; `gain` empty: g = 1.
struct RmsnormOut {
    Vec y, r;  // [rows][dim], [rows]
};
RmsnormOut rmsnorm(const Vec& x, const Vec& gain, int rows, int dim, double eps);
struct RmsnormGrads {
    Vec dx, dgain;  // dgain empty without a gain
};
RmsnormGrads rmsnorm_backward(const Vec& x, const Vec& gain, const Vec& dy, int rows, int dim, double eps);

// Rotates the first `width` columns of each row (of `stride` floats) in adjacent pairs by the
// row's position; direction -1 rotates back (the backward).
void rope(Vec& x, int rows, int width, int stride, int head_dim, const std::vector<int>& positions, double theta,
          double direction = 1.0);
// RoPE as the engines run it (llm/cpu_reference.cpp's rope_rotate): of each head of head_dim only
// the first `rotated` dimensions turn (0: all), pair j at frequency theta^(-2j / rotated) divided
// by factors[j] (empty: ones), positions divided by position_scale, cos and sin times attn_factor.
// Direction -1 applies the transpose (the backward).
struct RopeSpec {
    int head_dim = 0, rotated = 0;
    double theta = 10000.0, position_scale = 1.0, attn_factor = 1.0;
    Vec factors;
};
void rope(Vec& x, int rows, int width, int stride, const RopeSpec& r, const std::vector<int>& positions,
          double direction = 1.0);

// Rows of QKV are [q (n_heads) | k (n_kv_heads) | v (n_kv_heads)] heads of head_dim; rows
// [s seq_len, (s+1) seq_len) are one causal sequence of consecutive positions. Scores are q.k
// times `scale` (0: 1/sqrt(head_dim)); with a window, row i sees only the last `window` rows up to
// it (0: all of them).
struct AttentionShape {
    int rows = 0, seq_len = 0, n_heads = 0, n_kv_heads = 0, head_dim = 0;
    double scale = 0.0;
    int window = 0;
    double score_scale() const;
    int first_seen(int i) const;  // the first row row i sees
    int stride() const { return (n_heads + 2 * n_kv_heads) * head_dim; }
};
Vec attention(const Vec& qkv, const AttentionShape& s);  // O [rows][n_heads head_dim]
Vec attention_backward(const Vec& qkv, const Vec& dout, const AttentionShape& s);  // dQKV [rows][stride]

// GU rows are [gate | up]; A = SiLU(gate) up, or with `gelu` GELU's tanh form of the gate (GeGLU).
Vec swiglu(const Vec& gu, int rows, int hidden, bool gelu = false);
Vec swiglu_backward(const Vec& gu, const Vec& da, int rows, int hidden, bool gelu = false);  // d[gate | up]

// Losses summed over rows with weights: loss = weight sum_r row_w[r] loss_r.
struct LossOut {
    double loss = 0;
    Vec grad;                // d loss / d prediction
    Vec row_loss;            // loss_r (unweighted)
    std::vector<int> rank;   // soft CE: rank of the target's top token under the prediction
};
// loss_r = mean over the row of SmoothL1(pred - target) with threshold beta.
LossOut smooth_l1(const Vec& pred, const Vec& target, const Vec& row_w, int rows, int dim, double beta, double weight);
// loss_r = -sum_v softmax(target_logits)_v log softmax(logits)_v.
LossOut soft_cross_entropy(const Vec& logits, const Vec& target_logits, const Vec& row_w, int rows, int vocab,
                           double weight);

}  // namespace medusa::train::ref
