// variants: FWD BWD
#version 450
#include "layouts/push_constants.h"
#include "ffn_gate.glsl"
// The gated FFN's activation over a batch of rows whose GEMM output holds [gate | up] (one GEMM
// against the stacked gate and up weights), with the forward pass's gate: SiLU (SwiGLU) or
// GELU's tanh form (GeGLU, p.gelu). FWD: A = act(gate) * up. BWD: d(gate) = dA up act'(gate),
// d(up) = dA act(gate), written in the same [gate | up] layout. One thread per element of A.
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
    const bool gelu = p.gelu != 0;
#ifdef VARIANT_FWD
    A[id] = gate_activation(g, gelu) * u;
#else
    float act, slope;  // act(g) and act'(g)
    if (gelu) {
        const float k = 0.7978845608028654, c = 0.044715;  // sqrt(2 / pi)
        const float t = tanh(clamp(k * (g + c * g * g * g), -15.0, 15.0));
        act = 0.5 * g * (1.0 + t);
        slope = 0.5 * (1.0 + t) + 0.5 * g * (1.0 - t * t) * k * (1.0 + 3.0 * c * g * g);
    } else {
        const float s = 1.0 / (1.0 + exp(-g));
        act = g * s;
        slope = s * (1.0 + g * (1.0 - s));
    }
    const float da = A[id];
    DGU[r * 2 * p.hidden + i] = da * u * slope;
    DGU[r * 2 * p.hidden + p.hidden + i] = da * act;
#endif
}
