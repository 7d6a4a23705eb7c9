#version 450
#include "layouts/push_constants.h"
// SmoothL1 (Huber with threshold beta) between predicted and target rows, the mean over the
// row's features: the feature-regression loss of EAGLE. Writes each row's mean loss to Stats and
// d(weight * rowweight * loss)/d(pred) to dPred (overwritten, or added with accumulate); rows
// weighted 0 (padding) get zero gradients. One thread per row.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer P_ { float Pred[]; };     // [rows][dim]
layout(std430, binding = 1) readonly buffer T_ { float Target[]; };   // [rows][dim]
layout(std430, binding = 2) readonly buffer W_ { float RowW[]; };     // [rows]
layout(std430, binding = 3) buffer D_ { float DPred[]; };             // [rows][dim]
layout(std430, binding = 4) buffer S_ { float Stats[]; };
layout(push_constant) uniform PushBlock { TrainSmoothL1Push p; };

void main() {
    const uint r = gl_GlobalInvocationID.x;
    if (r >= p.rows) return;
    const float g = p.weight * RowW[r] / float(p.dim);
    float loss = 0.0;
    for (uint i = 0; i < p.dim; ++i) {
        const uint at = r * p.dim + i;
        const float d = Pred[at] - Target[at], a = abs(d);
        loss += a < p.beta ? 0.5 * d * d / p.beta : a - 0.5 * p.beta;
        const float grad = g * clamp(d / p.beta, -1.0, 1.0);
        DPred[at] = p.accumulate != 0 ? DPred[at] + grad : grad;
    }
    Stats[p.stats_off + r] = loss / float(p.dim);
}
