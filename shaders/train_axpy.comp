#version 450
#include "layouts/push_constants.h"
// Y = beta Y + alpha X over n floats at element offsets: LoRA's alpha/r scaling of its rank-r
// activations and their gradients, and sums of gradients from two paths.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X_ { float X[]; };
layout(std430, binding = 1) buffer Y_ { float Y[]; };
layout(push_constant) uniform PushBlock { TrainAxpyPush p; };
void main() {
    const uint i = gl_GlobalInvocationID.x;
    if (i >= p.n) return;
    // beta = 0 overwrites (so stale NaNs in Y do not survive 0 * Y).
    const float y = p.beta == 0.0 ? 0.0 : p.beta * Y[p.y_off + i];
    Y[p.y_off + i] = y + p.alpha * X[p.x_off + i];
}
