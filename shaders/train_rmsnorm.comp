// variants: FWD BWD GAIN
#version 450
#include "layouts/push_constants.h"
// RMSNorm over a batch of rows, y = g * x * r with r = 1 / sqrt(mean(x^2) + eps); the gain g is
// optional (has_gain 0: y = x * r), so pre-norms, post-norms and gain-free norms share it. A row
// may be a slice of a wider row (group > 0: the heads of q or of k, normalised one by one with a
// gain of the head size, as Qwen3's and Gemma 3's q/k norms are); X, Y and dX address it alike.
// FWD: Y and each row's r (kept for the backward), one thread per row.
// BWD: dX (+)= r g dy - x r^3 mean(g dy x), one thread per row.
// GAIN: the gain gradient, the sum over rows of dy x r, one thread per feature (no atomics).
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X_ { float X[]; };   // [rows][dim]
layout(std430, binding = 1) buffer Y_ { float Y[]; };            // FWD: Y out; BWD, GAIN: dY
layout(std430, binding = 2) buffer R_ { float R[]; };            // [rows]: r
#ifdef VARIANT_GAIN
layout(std430, binding = 3) buffer G_ { float G[]; };            // gradients (the gain's at gain_off)
#else
layout(std430, binding = 3) readonly buffer P_ { float P[]; };   // parameters (the gain at gain_off)
#endif
#ifdef VARIANT_BWD
layout(std430, binding = 4) buffer DX_ { float DX[]; };          // [rows][dim]
#endif
layout(push_constant) uniform PushBlock { TrainRmsnormPush p; };

#ifndef VARIANT_GAIN
float gain(uint i) { return p.has_gain != 0 ? P[p.gain_off + i] : 1.0; }
#endif
// The first float of row `id` in X, Y and dX.
uint row_start(uint id) { return p.group == 0 ? id * p.dim : p.x_off + (id / p.group) * p.group_stride + (id % p.group) * p.dim; }

void main() {
    const uint id = gl_GlobalInvocationID.x;
#ifdef VARIANT_GAIN
    if (id >= p.dim) return;
    float s = 0.0;
    for (uint r = 0; r < p.rows; ++r) s += Y[row_start(r) + id] * X[row_start(r) + id] * R[r];
    G[p.gain_off + id] = p.accumulate != 0 ? G[p.gain_off + id] + s : s;
#else
    if (id >= p.rows) return;
    const uint row = row_start(id);
#ifdef VARIANT_FWD
    float ss = 0.0;
    for (uint i = 0; i < p.dim; ++i) ss += X[row + i] * X[row + i];
    const float r = 1.0 / sqrt(ss / float(p.dim) + p.eps);
    R[id] = r;
    for (uint i = 0; i < p.dim; ++i) Y[row + i] = gain(i) * X[row + i] * r;
#else
    const float r = R[id];
    float s = 0.0;
    for (uint i = 0; i < p.dim; ++i) s += gain(i) * Y[row + i] * X[row + i];
    const float c = r * r * r * s / float(p.dim);
    for (uint i = 0; i < p.dim; ++i) {
        const float dx = r * gain(i) * Y[row + i] - X[row + i] * c;
        DX[row + i] = p.accumulate != 0 ? DX[row + i] + dx : dx;
    }
#endif
#endif
}
