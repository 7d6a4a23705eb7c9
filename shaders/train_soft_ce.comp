#version 450
#include "layouts/push_constants.h"
#include "reduce.glsl"
// Cross-entropy of a row's logits against a soft target distribution given as logits too:
// loss = -sum_v p_v log q_v with p = softmax(target logits), q = softmax(logits) (EAGLE's
// distribution loss, p being the target model's own next-token distribution). Replaces the
// logits by d(weight * rowweight * loss)/d(logits) = weight rowweight (q - p), writes the loss and
// the rank of p's top token under q (0: the top tokens agree; ties rank by index) to Stats.
// One workgroup per row.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer L_ { float Logits[]; };             // [rows][vocab], gradient out
layout(std430, binding = 1) readonly buffer T_ { float TLogits[]; };   // [rows][vocab]
layout(std430, binding = 2) readonly buffer W_ { float RowW[]; };      // [rows]
layout(std430, binding = 3) buffer S_ { float Stats[]; };
layout(push_constant) uniform PushBlock { TrainSoftCePush p; };

void main() {
    const uint row = gl_WorkGroupID.x, t = gl_LocalInvocationID.x, base = row * p.vocab;
    float tm = -3.0e38, lm = -3.0e38;
    for (uint v = t; v < p.vocab; v += 64) {
        tm = max(tm, TLogits[base + v]);
        lm = max(lm, Logits[base + v]);
    }
    tm = workgroup_max(tm);
    lm = workgroup_max(lm);
    float ts = 0.0, ls = 0.0, first = -3.0e38;  // first: minus the lowest index of p's top token
    for (uint v = t; v < p.vocab; v += 64) {
        const float tv = TLogits[base + v];
        ts += exp(tv - tm);
        ls += exp(Logits[base + v] - lm);
        if (tv == tm) first = max(first, -float(v));
    }
    ts = workgroup_sum(ts);
    ls = workgroup_sum(ls);
    const uint top = uint(-workgroup_max(first));
    const float log_ls = log(ls), top_logit = Logits[base + top];
    barrier();  // every invocation has read top_logit before its owner overwrites it
    float loss = 0.0, above = 0.0;
    const float g = p.weight * RowW[row];
    for (uint v = t; v < p.vocab; v += 64) {
        const float pv = exp(TLogits[base + v] - tm) / ts, l = Logits[base + v];
        const float log_q = l - lm - log_ls;
        loss -= pv * log_q;
        if (l > top_logit || (l == top_logit && v < top)) above += 1.0;
        Logits[base + v] = g * (exp(log_q) - pv);
    }
    loss = workgroup_sum(loss);
    above = workgroup_sum(above);
    if (t == 0) {
        Stats[p.stats_off + row] = loss;
        Stats[p.rank_off + row] = above;
    }
}
