#version 450
#include "layouts/push_constants.h"
// Softmax cross-entropy of one head over a batch, one workgroup per row. Writes the row's loss and
// the target's rank (0 = top-1) to Stats, and replaces the logits by d(scale * CE)/d(logits) =
// scale * (softmax - onehot). Rows whose target is negative (past the sequence end) get zeros.
layout(local_size_x = 128) in;
layout(std430, binding = 0) buffer L_ { float L[]; };               // [rows][vocab], logits in, gradient out
layout(std430, binding = 1) readonly buffer T_ { int T[]; };        // targets
layout(std430, binding = 2) buffer S_ { float S[]; };               // [rows][2]: loss, rank
layout(std430, binding = 3) readonly buffer SP_ { float SP[]; };    // step parameters (scale per head)
layout(push_constant) uniform PushBlock { TrainSoftmaxCePush p; };

shared float red[128];

float reduce_max(float v) {
    const uint t = gl_LocalInvocationID.x;
    red[t] = v;
    barrier();
    for (uint s = 64; s > 0; s >>= 1) {
        if (t < s) red[t] = max(red[t], red[t + s]);
        barrier();
    }
    const float r = red[0];
    barrier();
    return r;
}

float reduce_sum(float v) {
    const uint t = gl_LocalInvocationID.x;
    red[t] = v;
    barrier();
    for (uint s = 64; s > 0; s >>= 1) {
        if (t < s) red[t] += red[t + s];
        barrier();
    }
    const float r = red[0];
    barrier();
    return r;
}

void main() {
    const uint row = gl_WorkGroupID.x, t = gl_LocalInvocationID.x;
    const uint base = row * p.vocab;
    const int target = T[p.target_off + row];
    if (target < 0) {
        for (uint v = t; v < p.vocab; v += 128) L[base + v] = 0.0;
        if (t == 0) {
            S[p.stats_off + row * 2] = 0.0;
            S[p.stats_off + row * 2 + 1] = -1.0;
        }
        return;
    }
    const float lt = L[base + uint(target)];
    float m = -1e30, above = 0.0;
    for (uint v = t; v < p.vocab; v += 128) {
        const float l = L[base + v];
        m = max(m, l);
        // Ties rank in index order, as a stable top-k would.
        if (l > lt || (l == lt && v < uint(target))) above += 1.0;
    }
    m = reduce_max(m);
    above = reduce_sum(above);
    float sum = 0.0;
    for (uint v = t; v < p.vocab; v += 128) sum += exp(L[base + v] - m);
    sum = reduce_sum(sum);
    const float scale = SP[p.scale_index];
    for (uint v = t; v < p.vocab; v += 128) {
        const float prob = exp(L[base + v] - m) / sum;
        L[base + v] = scale * (prob - (v == uint(target) ? 1.0 : 0.0));
    }
    if (t == 0) {
        S[p.stats_off + row * 2] = log(sum) + m - lt;
        S[p.stats_off + row * 2 + 1] = above;
    }
}
