// variants: FWD BWD
#version 450
#include "layouts/push_constants.h"
// The bias of a linear layer Y = X W^T + b for a batch of rows (the GEMM is train_matmul).
// FWD: Y += b, one thread per element. BWD: db (+)= the column sum of dY over rows, one thread
// per feature, so the sum needs no atomics.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Y_ { float Y[]; };  // FWD: Y in and out; BWD: dY
layout(std430, binding = 1) buffer P_ { float P[]; };  // FWD: parameters; BWD: gradients
layout(push_constant) uniform PushBlock { TrainBiasPush p; };

void main() {
    const uint id = gl_GlobalInvocationID.x;
#ifdef VARIANT_FWD
    if (id >= p.rows * p.dim) return;
    const uint r = id / p.dim, i = id % p.dim;
    Y[r * p.stride + i] += P[p.bias_off + i];
#else
    if (id >= p.dim) return;
    float s = 0.0;
    for (uint r = 0; r < p.rows; ++r) s += Y[r * p.stride + id];
    P[p.bias_off + id] = p.accumulate != 0 ? P[p.bias_off + id] + s : s;
#endif
}
