// variants: FWD BWD_Q BWD_KV
#version 450
#include "layouts/push_constants.h"
// EAGLE-3's training-time-test attention, forward and backward, for one unrolled step k.
// QKV (and dQKV) hold every step's rows, step m at m * step_floats; rows [s seq_len, (s+1)
// seq_len) are one sequence. Step k's query of row i sees step 0's keys of its sequence up to i
// (the true context) and row i's keys of steps 1..k (the drafts of its own chain), as drafting
// past position i does. O, LSE and dO are step k's. Same method as train_attention.comp:
// FWD: online softmax per (row, head), keeping the log-sum-exp.
// BWD_Q: dq of step k, overwritten.
// BWD_KV: one thread per (row j, K/V head) writes dk, dv of step 0's row j (from the queries
//      i >= j of step k) and of row j's steps 1..k (from the query of row j); `accumulate` adds to
//      what later steps, run backward first, left there.
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint HEAD_DIM = 8;
const uint H4 = HEAD_DIM / 4;
layout(std430, binding = 0) readonly buffer QKV_ { vec4 QKV[]; };  // [steps][rows][stride / 4]
#ifdef VARIANT_FWD
layout(std430, binding = 1) writeonly buffer O_ { vec4 O[]; };     // [rows][n_heads hd / 4]
layout(std430, binding = 2) writeonly buffer L_ { float LSE[]; };  // [rows][n_heads]
#else
layout(std430, binding = 1) readonly buffer O_ { vec4 O[]; };
layout(std430, binding = 2) readonly buffer L_ { float LSE[]; };
layout(std430, binding = 3) readonly buffer DO_ { vec4 DO[]; };    // [rows][n_heads hd / 4]
layout(std430, binding = 4) buffer DQKV_ { vec4 DQKV[]; };         // [steps][rows][stride / 4]
#endif
layout(push_constant) uniform PushBlock { TrainTttAttentionPush p; };

// First vec4 of a head's q, k, v of row r of step m, or of an O row (step k).
uint row_at(uint m, uint r) { return (m * p.step_floats + r * p.stride) / 4; }
uint q_at(uint m, uint r, uint h) { return row_at(m, r) + h * H4; }
uint k_at(uint m, uint r, uint g) { return row_at(m, r) + (p.n_heads + g) * H4; }
uint v_at(uint m, uint r, uint g) { return row_at(m, r) + (p.n_heads + p.n_kv_heads + g) * H4; }
uint o_at(uint r, uint h) { return (r * p.n_heads + h) * H4; }

#ifndef VARIANT_FWD
float delta(uint r, uint h) {  // D = dO . O of one (row, head)
    float d = 0.0;
    for (uint e = 0; e < H4; ++e) d += dot(DO[o_at(r, h) + e], O[o_at(r, h) + e]);
    return d;
}
#endif

#ifdef VARIANT_BWD_KV
// dk, dv of the key (m, j) from the queries of step k in rows [first, last).
void key_gradient(uint m, uint j, uint g, uint first, uint last, float scale) {
    const uint group = p.n_heads / p.n_kv_heads;
    vec4 k[H4], v[H4], dk[H4], dv[H4];
    for (uint e = 0; e < H4; ++e) {
        k[e] = QKV[k_at(m, j, g) + e];
        v[e] = QKV[v_at(m, j, g) + e];
        dk[e] = vec4(0.0);
        dv[e] = vec4(0.0);
    }
    for (uint h = g * group; h < (g + 1) * group; ++h)
        for (uint i = first; i < last; ++i) {
            float s = 0.0, dp = 0.0;
            for (uint e = 0; e < H4; ++e) {
                s += dot(QKV[q_at(p.step, i, h) + e], k[e]);
                dp += dot(DO[o_at(i, h) + e], v[e]);
            }
            const float prob = exp(s * scale - LSE[i * p.n_heads + h]);
            const float ds = prob * (dp - delta(i, h));
            for (uint e = 0; e < H4; ++e) {
                dv[e] += prob * DO[o_at(i, h) + e];
                dk[e] += ds * QKV[q_at(p.step, i, h) + e];
            }
        }
    for (uint e = 0; e < H4; ++e) {
        const vec4 gk = dk[e] * scale;
        DQKV[k_at(m, j, g) + e] = p.accumulate != 0 ? DQKV[k_at(m, j, g) + e] + gk : gk;
        DQKV[v_at(m, j, g) + e] = p.accumulate != 0 ? DQKV[v_at(m, j, g) + e] + dv[e] : dv[e];
    }
}
#endif

void main() {
    const float scale = 1.0 / sqrt(float(HEAD_DIM));
#ifdef VARIANT_BWD_KV
    const uint id = gl_GlobalInvocationID.x;
    if (id >= p.rows * p.n_kv_heads) return;
    const uint j = id / p.n_kv_heads, g = id % p.n_kv_heads;
    const uint end = min((j / p.seq_len + 1) * p.seq_len, p.rows);
    key_gradient(0, j, g, j, end, scale);
    for (uint m = 1; m <= p.step; ++m) key_gradient(m, j, g, j, j + 1, scale);
#else
    const uint id = gl_GlobalInvocationID.x;
    if (id >= p.rows * p.n_heads) return;
    const uint i = id / p.n_heads, h = id % p.n_heads;
    const uint g = h / (p.n_heads / p.n_kv_heads), start = (i / p.seq_len) * p.seq_len;
    const uint keys = i - start + 1 + p.step;  // step 0's rows start..i, then steps 1..k of row i
    vec4 q[H4], acc[H4];
    for (uint e = 0; e < H4; ++e) {
        q[e] = QKV[q_at(p.step, i, h) + e];
        acc[e] = vec4(0.0);
    }
#ifdef VARIANT_FWD
    float m = -3.0e38, l = 0.0;
    for (uint n = 0; n < keys; ++n) {
        const uint km = n <= i - start ? 0 : n - (i - start), kr = km == 0 ? start + n : i;
        float s = 0.0;
        for (uint e = 0; e < H4; ++e) s += dot(q[e], QKV[k_at(km, kr, g) + e]);
        s *= scale;
        const float m_new = max(m, s), c = exp(m - m_new), w = exp(s - m_new);
        l = l * c + w;
        for (uint e = 0; e < H4; ++e) acc[e] = acc[e] * c + w * QKV[v_at(km, kr, g) + e];
        m = m_new;
    }
    for (uint e = 0; e < H4; ++e) O[o_at(i, h) + e] = acc[e] / l;
    LSE[i * p.n_heads + h] = m + log(l);
#else
    vec4 dout[H4];
    for (uint e = 0; e < H4; ++e) dout[e] = DO[o_at(i, h) + e];
    const float d = delta(i, h), lse = LSE[i * p.n_heads + h];
    for (uint n = 0; n < keys; ++n) {
        const uint km = n <= i - start ? 0 : n - (i - start), kr = km == 0 ? start + n : i;
        float s = 0.0, dp = 0.0;
        for (uint e = 0; e < H4; ++e) {
            s += dot(q[e], QKV[k_at(km, kr, g) + e]);
            dp += dot(dout[e], QKV[v_at(km, kr, g) + e]);
        }
        const float ds = exp(s * scale - lse) * (dp - d);
        for (uint e = 0; e < H4; ++e) acc[e] += ds * QKV[k_at(km, kr, g) + e];
    }
    for (uint e = 0; e < H4; ++e) DQKV[q_at(p.step, i, h) + e] = acc[e] * scale;
#endif
#endif
}
