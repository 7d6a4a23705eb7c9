// variants: FWD BWD
#version 450
#include "layouts/push_constants.h"
// The SwiGLU gate over a batch of rows whose GEMM output holds [gate | up] (one GEMM against the
// stacked gate and up weights). FWD: A = SiLU(gate) * up. BWD: d(gate) = dA up SiLU'(gate),
// d(up) = dA SiLU(gate), written in the same [gate | up] layout. One thread per element of A.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer GU_ { float GU[]; };  // [rows][2 hidden]
layout(std430, binding = 1) buffer A_ { float A[]; };             // [rows][hidden]: FWD A out; BWD dA
#ifdef VARIANT_BWD
layout(std430, binding = 2) writeonly buffer DGU_ { float DGU[]; };  // [rows][2 hidden]
#endif
layout(push_constant) uniform PushBlock { TrainSwigluPush p; };

void main() {
    const uint id = gl_GlobalInvocationID.x;
    if (id >= p.rows * p.hidden) return;
    const uint r = id / p.hidden, i = id % p.hidden;
    const float g = GU[r * 2 * p.hidden + i], u = GU[r * 2 * p.hidden + p.hidden + i];
    const float s = 1.0 / (1.0 + exp(-g));
#ifdef VARIANT_FWD
    A[id] = g * s * u;
#else
    const float da = A[id];
    DGU[r * 2 * p.hidden + i] = da * u * s * (1.0 + g * (1.0 - s));
    DGU[r * 2 * p.hidden + p.hidden + i] = da * g * s;
#endif
}
