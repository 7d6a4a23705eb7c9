// variants: FWD BWD_Q BWD_KV
#version 450
#include "layouts/push_constants.h"
// Causal multi-head attention with grouped K/V heads over a batch of sequences (rows
// [s seq_len, (s+1) seq_len) are one sequence of consecutive positions; row r sees rows
// s seq_len .. r, or with a sliding window only the last `window` of them, its own included),
// forward and backward, for training. QKV rows hold [q | k | v] heads, already rotated; the
// scores are q.k times `scale` (1/sqrt(hd) unless the model says otherwise).
// FWD: O = softmax(scale q k^T) v per head, one thread per (row, head) with an online
//      softmax; keeps each (row, head)'s log-sum-exp for the backward.
// BWD_Q: dq_i = sum_j P_ij (dO_i.v_j - D_i) k_j scale, D_i = dO_i.O_i; thread per (row, head).
// BWD_KV: dk_j = sum_{i seeing j, heads of the group} P_ij (dO_i.v_j - D_i) q_i scale and
//      dv_j = sum P_ij dO_i; one thread per (row, K/V head), so no two threads write one value.
// Probabilities are recomputed from the log-sum-exp (no T x T matrix is stored). Heads are read
// four floats per load (the head size is a multiple of 4).
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint HEAD_DIM = 8;
const uint H4 = HEAD_DIM / 4;
layout(std430, binding = 0) readonly buffer QKV_ { vec4 QKV[]; };  // [rows][stride / 4]
#ifdef VARIANT_FWD
layout(std430, binding = 1) writeonly buffer O_ { vec4 O[]; };     // [rows][n_heads hd / 4]
layout(std430, binding = 2) writeonly buffer L_ { float LSE[]; };  // [rows][n_heads]
#else
layout(std430, binding = 1) readonly buffer O_ { vec4 O[]; };
layout(std430, binding = 2) readonly buffer L_ { float LSE[]; };
layout(std430, binding = 3) readonly buffer DO_ { vec4 DO[]; };    // [rows][n_heads hd / 4]
layout(std430, binding = 4) buffer DQKV_ { vec4 DQKV[]; };         // [rows][stride / 4]: dq, dk, dv
#endif
layout(push_constant) uniform PushBlock { TrainAttentionPush p; };

// First vec4 of a head's q, k, v (of row r) or O row.
uint q_at(uint r, uint h) { return (r * p.stride) / 4 + h * H4; }
uint k_at(uint r, uint g) { return (r * p.stride) / 4 + (p.n_heads + g) * H4; }
uint v_at(uint r, uint g) { return (r * p.stride) / 4 + (p.n_heads + p.n_kv_heads + g) * H4; }
uint o_at(uint r, uint h) { return (r * p.n_heads + h) * H4; }

#ifndef VARIANT_FWD
float delta(uint r, uint h) {  // D = dO . O of one (row, head)
    float d = 0.0;
    for (uint e = 0; e < H4; ++e) d += dot(DO[o_at(r, h) + e], O[o_at(r, h) + e]);
    return d;
}
#endif

void main() {
    const float scale = p.scale > 0.0 ? p.scale : 1.0 / sqrt(float(HEAD_DIM));
#ifdef VARIANT_BWD_KV
    const uint id = gl_GlobalInvocationID.x;
    if (id >= p.rows * p.n_kv_heads) return;
    const uint j = id / p.n_kv_heads, g = id % p.n_kv_heads;
    uint end = min((j / p.seq_len + 1) * p.seq_len, p.rows);
    if (p.window > 0) end = min(end, j + p.window);  // the last row whose window holds j, plus one
    const uint group = p.n_heads / p.n_kv_heads;
    vec4 k[H4], v[H4], dk[H4], dv[H4];
    for (uint e = 0; e < H4; ++e) {
        k[e] = QKV[k_at(j, g) + e];
        v[e] = QKV[v_at(j, g) + e];
        dk[e] = vec4(0.0);
        dv[e] = vec4(0.0);
    }
    for (uint h = g * group; h < (g + 1) * group; ++h)
        for (uint i = j; i < end; ++i) {
            float s = 0.0, dp = 0.0;
            for (uint e = 0; e < H4; ++e) {
                s += dot(QKV[q_at(i, h) + e], k[e]);
                dp += dot(DO[o_at(i, h) + e], v[e]);
            }
            const float prob = exp(s * scale - LSE[i * p.n_heads + h]);
            const float ds = prob * (dp - delta(i, h));
            for (uint e = 0; e < H4; ++e) {
                dv[e] += prob * DO[o_at(i, h) + e];
                dk[e] += ds * QKV[q_at(i, h) + e];
            }
        }
    for (uint e = 0; e < H4; ++e) {
        DQKV[k_at(j, g) + e] = dk[e] * scale;
        DQKV[v_at(j, g) + e] = dv[e];
    }
#else
    const uint id = gl_GlobalInvocationID.x;
    if (id >= p.rows * p.n_heads) return;
    const uint i = id / p.n_heads, h = id % p.n_heads;
    const uint g = h / (p.n_heads / p.n_kv_heads);
    uint start = (i / p.seq_len) * p.seq_len;
    if (p.window > 0 && i + 1 > start + p.window) start = i + 1 - p.window;
    vec4 q[H4], acc[H4];
    for (uint e = 0; e < H4; ++e) {
        q[e] = QKV[q_at(i, h) + e];
        acc[e] = vec4(0.0);
    }
#ifdef VARIANT_FWD
    float m = -3.0e38, l = 0.0;
    for (uint j = start; j <= i; ++j) {
        float s = 0.0;
        for (uint e = 0; e < H4; ++e) s += dot(q[e], QKV[k_at(j, g) + e]);
        s *= scale;
        const float m_new = max(m, s), c = exp(m - m_new), w = exp(s - m_new);
        l = l * c + w;
        for (uint e = 0; e < H4; ++e) acc[e] = acc[e] * c + w * QKV[v_at(j, g) + e];
        m = m_new;
    }
    for (uint e = 0; e < H4; ++e) O[o_at(i, h) + e] = acc[e] / l;
    LSE[i * p.n_heads + h] = m + log(l);
#else
    vec4 dout[H4];
    for (uint e = 0; e < H4; ++e) dout[e] = DO[o_at(i, h) + e];
    const float d = delta(i, h), lse = LSE[i * p.n_heads + h];
    for (uint j = start; j <= i; ++j) {
        float s = 0.0, dp = 0.0;
        for (uint e = 0; e < H4; ++e) {
            s += dot(q[e], QKV[k_at(j, g) + e]);
            dp += dot(dout[e], QKV[v_at(j, g) + e]);
        }
        const float ds = exp(s * scale - lse) * (dp - d);
        for (uint e = 0; e < H4; ++e) acc[e] += ds * QKV[k_at(j, g) + e];
    }
    for (uint e = 0; e < H4; ++e) DQKV[q_at(i, h) + e] = acc[e] * scale;
#endif
#endif
}
