#version 450
#include "layouts/push_constants.h"
#include "rope.glsl"
// RoPE over a batch of rows, in place: the first `width` columns of each row (q's heads, then
// k's) rotated in llama2.c's adjacent-pair order by the row's position, as rope_kv.comp does in
// the forward pass: the first `rotated` dimensions of each head (partial RoPE), each pair's
// frequency divided by its factor (rope_freqs, LongRoPE), positions divided by the linear scaling,
// cos and sin times the attention factor. direction -1 rotates back by the same angle, scaled by
// the same factor: the transpose of the forward's linear map, so it is the backward (dq, dk from
// the gradients of the rotated q, k). One thread per pair; pairs past `rotated` are left alone.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer X_ { float X[]; };            // [rows][stride]
layout(std430, binding = 1) readonly buffer Pos_ { int Pos[]; };  // [rows]
layout(std430, binding = 2) readonly buffer F_ { float F[]; };    // per-pair factors at factor_off (has_factors)
layout(push_constant) uniform PushBlock { TrainRopePush p; };

void main() {
    const uint id = gl_GlobalInvocationID.x, pairs = p.width / 2;
    if (id >= p.rows * pairs) return;
    const uint r = id / pairs, i = 2 * (id % pairs), d = i % p.head_dim;
    const uint rotated = p.rotated > 0 ? p.rotated : p.head_dim;
    if (d >= rotated) return;
    const float factor = p.has_factors != 0 ? F[p.factor_off + d / 2] : 1.0;
    const float scale = p.position_scale > 0.0 ? p.position_scale : 1.0;
    const vec2 cs = rope_cos_sin(d, rotated, p.theta, factor, float(Pos[r]) / scale,
                                 p.attn_factor > 0.0 ? p.attn_factor : 1.0);
    const float c = cs.x, s = p.direction * cs.y;
    const uint at = r * p.stride + i;
    const float v0 = X[at], v1 = X[at + 1];
    X[at] = v0 * c - v1 * s;
    X[at + 1] = v0 * s + v1 * c;
}
