#version 450
#include "layouts/push_constants.h"
#include "rope.glsl"
// RoPE over a batch of rows, in place: the first `width` columns of each row (q's heads, then
// k's) rotated in llama2.c's adjacent-pair order by the row's position, as rope_kv.comp does in
// the forward pass. direction -1 rotates back by the same angle: the rotation's transpose, so
// it is the backward (dq, dk from the gradients of the rotated q, k). One thread per pair.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer X_ { float X[]; };            // [rows][stride]
layout(std430, binding = 1) readonly buffer Pos_ { int Pos[]; };  // [rows]
layout(push_constant) uniform PushBlock { TrainRopePush p; };

void main() {
    const uint id = gl_GlobalInvocationID.x, pairs = p.width / 2;
    if (id >= p.rows * pairs) return;
    const uint r = id / pairs, i = 2 * (id % pairs);
    const float freq = rope_frequency(i % p.head_dim, p.head_dim, p.theta, 1.0);
    const float angle = float(Pos[r]) * freq;
    const float c = cos(angle), s = p.direction * sin(angle);
    const uint at = r * p.stride + i;
    const float v0 = X[at], v1 = X[at + 1];
    X[at] = v0 * c - v1 * s;
    X[at + 1] = v0 * s + v1 * c;
}
