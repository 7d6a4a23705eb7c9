// variants: FWD BWD
#version 450
#include "layouts/push_constants.h"
// The Medusa residual block around the GEMM Z = X W^T, for a batch of rows.
// FWD: Z += b (kept for the backward pass), Y = X + SiLU(Z).
// BWD: dZ = dY * SiLU'(Z) and the bias gradient db = sum over rows of dZ; one thread per feature,
// so the column sum needs no atomics. dY is also dX's residual part and is left in place.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Z_ { float Z[]; };
layout(std430, binding = 1) readonly buffer X_ { float X[]; };    // FWD: block input; BWD: dY
layout(std430, binding = 2) buffer Y_ { float Y[]; };             // FWD: block output; BWD: dZ
layout(std430, binding = 3) buffer P_ { float P[]; };             // FWD: parameters (bias); BWD: gradients
layout(push_constant) uniform PushBlock { TrainResblockPush p; };

float sigmoid(float z) { return 1.0 / (1.0 + exp(-z)); }

void main() {
    const uint i = gl_GlobalInvocationID.x;
    if (i >= p.dim) return;
#ifdef VARIANT_FWD
    const float b = P[p.bias_off + i];
    for (uint r = 0; r < p.rows; ++r) {
        const uint e = r * p.dim + i;
        const float z = Z[e] + b;
        Z[e] = z;
        Y[e] = X[e] + z * sigmoid(z);
    }
#else
    float db = 0.0;
    for (uint r = 0; r < p.rows; ++r) {
        const uint e = r * p.dim + i;
        const float z = Z[e], s = sigmoid(z);
        const float dz = X[e] * s * (1.0 + z * (1.0 - s));
        Y[e] = dz;
        db += dz;
    }
    P[p.bias_off + i] = db;
#endif
}
