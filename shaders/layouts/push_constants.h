// The push constants of every compute shader, declared once for C++ (llm/kernel_params.h and
// the trainer record them) and GLSL (each shader's push_constant block holds one as `p`).
// Vulkan lays push constants out by std430's rules, as tests/test_layouts.cpp checks.
#ifndef MEDUSA_PUSH_CONSTANTS_H
#define MEDUSA_PUSH_CONSTANTS_H
#include "layouts/layout_types.h"
LAYOUT_BEGIN

// The forward pass.
struct MatmulPush {
    u32 in_dim;
    u32 out_dim;      // rows written (for SwiGLU: half the rows of W)
    u32 n_tokens;
    u32 group_shift;  // log2 of the quantization group size
    u32 x_stride;
    u32 y_stride;
    float eps;
    u32 block_rows;   // out_dim, or the rows of one stacked matrix (one input row per block)
    u32 row_offset;   // output row of the dispatch's first row (a stack stored in several types)
    // The fused RoPE of the qkv matmul (kMatmulRope; rope_kv.comp's RopePush otherwise).
    u32 rope_q_dim;          // rows of q; then kv_dim rows of k and of v
    u32 rope_kv_dim;
    u32 rope_head_dim;
    float rope_theta;
    u32 rope_cache_offset;   // first float of this layer in the all-layer cache
    float rope_position_scale;
    u32 rope_rotated;        // leading dimensions of a head that rotate (the head size: all)
    float rope_attn_factor;  // the rotated dimensions times it (LongRoPE; 1 without)
    u32 rope_cache_rows;     // slots the layer's cache holds: slot s lives in row s % rows
};
struct EmbedPush {
    u32 dim;
    u32 group_shift;
    u32 rows;     // of the table: a token past it reads the last row, never past the buffer
    float scale;  // every value times it (Gemma: sqrt(dim); 1 otherwise)
};
// rope_kv.comp and head_rope_kv.comp.
struct RopePush {
    u32 dim;     // q's width: heads x head size
    u32 kv_dim;
    u32 head_dim;
    float theta;
    u32 cache_offset;      // first float of this layer in the all-layer cache
    float position_scale;  // "linear" RoPE scaling: positions are divided by it (1 without)
    u32 rotated;           // leading dimensions of a head that rotate (head_dim: all)
    float attn_factor;     // the rotated dimensions times it (LongRoPE; 1 without)
    u32 cache_rows;        // slots the layer's cache holds: slot s lives in row s % cache_rows
    u32 n_heads;           // head_rope_kv.comp: q heads, then n_kv_heads k heads
    u32 n_kv_heads;
    float eps;             // head_rope_kv.comp: the q/k norms' epsilon
};
struct AttentionPush {
    u32 dim;     // q's width: heads x head size
    u32 kv_dim;
    u32 head_dim;
    u32 n_heads;
    u32 kv_mul;  // query heads per kv head
    u32 ctx;
    u32 cache_offset;  // first float of this layer in the all-layer cache
    u32 splits;        // attention_split.comp: key ranges per (token, head); 0 or 1: one
    float scale;       // of q.k
    u32 window;        // a local layer's window in positions (0: every earlier key)
    u32 cache_rows;    // slots the layer's cache holds: slot s lives in row s % cache_rows
};
struct RmsnormPush {
    u32 dim;
    u32 n_tokens;
    float eps;
    u32 store_features;  // 1: also write each row into the feature cache at its slot
    u32 accumulate;      // 1: add the normed row to the output's instead of writing it (post-norms)
};
struct ArgmaxPush {
    u32 vocab;
    u32 n_tokens;
};

// The speculative step.
struct NodeStatsPush {
    u32 vocab;
    u32 n_tokens;
    float temperature;
};
struct KvCompactPush {
    u32 n_layers;
    u32 kv_dim;
    u32 ctx;
    u32 feature_dim;  // columns of the feature cache moved too (0: none)
};
// Kernels that copy or add whole rows (select_row, eagle_input, eagle_store, add_bias).
struct RowPush {
    u32 dim;
};
// feature_store: a block's rows into the feature cache at their slots, at a column offset.
struct FeatureStorePush {
    u32 dim;
    u32 stride;  // floats of one slot's feature (every captured layer's rows side by side)
    u32 offset;  // this layer's first column in it
};
struct TopkPush {
    u32 vocab;
    u32 stride;  // floats between two heads' logits
    u32 topk;
};

// Medusa head training.
struct TrainMatmulPush {
    u32 M, N, K;
    u32 a_off, a_rs, a_cs;
    u32 b_off, b_rs, b_cs;
    u32 c_off, c_rs;
    u32 accumulate;
};
struct TrainResblockPush {
    u32 dim, rows, bias_off;
};
struct TrainSoftmaxCePush {
    u32 vocab, target_off, stats_off, scale_index;
};
struct TrainGradNormPush {
    u32 n;
};
struct TrainAdamwPush {
    u32 n, n_parts;
};

// Reusable backward pieces (EAGLE's decoder layer; Medusa-2's backbone). Rows are a batch of
// token positions; "accumulate" adds to the output instead of overwriting it.
struct TrainBiasPush {
    u32 rows, dim;
    u32 stride;     // floats between two rows of Y
    u32 bias_off;   // first float of b in the parameter (FWD) or gradient (BWD) buffer
    u32 accumulate;
};
struct TrainRmsnormPush {
    u32 rows, dim;
    u32 gain_off;   // first float of the gain in the parameter / gradient buffer
    u32 has_gain;   // 0: y = x / rms(x)
    float eps;
    u32 accumulate;
    // Rows that are slices of wider rows (the heads of q or of k in rows of q|k|v): row i starts
    // at x_off + (i / group) * group_stride + (i % group) * dim in X, Y and dX; group 0: rows of
    // dim floats one after another (x_off and group_stride unread).
    u32 x_off;
    u32 group;
    u32 group_stride;
};
struct TrainRopePush {
    u32 rows;
    u32 width;      // rotated columns of each row: q, then k (whole heads)
    u32 stride;     // floats between two rows
    u32 head_dim;
    float theta;
    float direction;  // +1 rotates (forward), -1 rotates back (the backward)
    u32 rotated;         // leading dimensions of each head that rotate (partial RoPE); 0: the whole head
    float position_scale;  // positions are divided by it (linear scaling); 0: 1
    float attn_factor;   // cos and sin are multiplied by it (LongRoPE's attention factor); 0: 1
    u32 has_factors;     // 1: pair j's frequency is divided by factors[factor_off + j] (rope_freqs, LongRoPE)
    u32 factor_off;
};
struct TrainAttentionPush {
    u32 rows;
    u32 seq_len;    // rows [s*seq_len, (s+1)*seq_len) are one causal sequence
    u32 n_heads, n_kv_heads;
    u32 stride;     // floats per row of QKV: [q (n_heads) | k (n_kv_heads) | v (n_kv_heads)] heads
    float scale;    // of q.k; 0: 1 / sqrt(head size)
    u32 window;     // a sliding window: row i sees rows i - window + 1 .. i of its sequence; 0: all up to i
};
// EAGLE-3's training-time test: step k's query of row i attends to step 0's keys of rows
// s seq_len .. i (the true context) and to row i's keys of steps 1..k (its own drafts so far).
struct TrainTttAttentionPush {
    u32 rows;         // rows of one step: sequences * seq_len
    u32 seq_len;
    u32 n_heads, n_kv_heads;
    u32 stride;       // floats per row of QKV: [q | k | v] heads
    u32 step;         // k: the step whose queries run
    u32 step_floats;  // floats between the QKV (and dQKV) rows of two steps
    u32 accumulate;   // BWD_KV adds to dk, dv (every step but the first one run backward)
};
struct TrainSwigluPush {
    u32 rows, hidden;  // GU rows are [gate (hidden) | up (hidden)]
    u32 gelu;          // the gate's activation: 0 SiLU (SwiGLU), 1 GELU's tanh form (GeGLU)
};
struct TrainSmoothL1Push {
    u32 rows, dim;
    u32 stats_off;  // per-row mean loss goes to stats[stats_off + row]
    float beta;
    float weight;   // the loss weight (EAGLE's v_w)
    u32 accumulate;
};
struct TrainSoftCePush {
    u32 vocab;
    u32 stats_off;  // per-row loss goes to stats[stats_off + row]
    u32 rank_off;   // the rank of the target's top token under the logits, stats[rank_off + row]
    float weight;   // the loss weight (EAGLE's p_w)
};
struct TrainAxpyPush {
    u32 n;
    u32 x_off, y_off;  // first float of X and of Y in their buffers
    float alpha;       // Y = beta Y + alpha X
    float beta;
};

LAYOUT_END
#endif
