#version 450
#include "layouts/push_constants.h"
// Per block token, over its logits at temperature T: the log-normaliser and the entropy as
// FasterDecoding/Medusa's typical acceptance computes it (evaluate_posterior:
// -sum p * log(p + 1e-5)), so the CPU's acceptance rules need not read whole rows.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Logits { float L[]; };
layout(std430, binding = 1) writeonly buffer Stats { float stats[]; };  // [token][2]: lse_T, entropy_T
layout(push_constant) uniform PushBlock { NodeStatsPush p; };
#include "reduce.glsl"

void main() {
    const uint n = gl_WorkGroupID.x, tid = gl_LocalInvocationID.x;
    if (n >= p.n_tokens) return;
    const float inv_t = 1.0 / (p.temperature > 0.0 ? p.temperature : 1.0);
    const uint off = n * p.vocab;
    float m = -3.4e38;
    for (uint i = tid; i < p.vocab; i += 64) m = max(m, L[off + i] * inv_t);
    m = workgroup_max(m);
    float s = 0.0;
    for (uint i = tid; i < p.vocab; i += 64) s += exp(L[off + i] * inv_t - m);
    const float lse = m + log(workgroup_sum(s));
    float h = 0.0;
    for (uint i = tid; i < p.vocab; i += 64) {
        const float pr = exp(L[off + i] * inv_t - lse);
        h -= pr * log(pr + 1e-5);
    }
    h = workgroup_sum(h);
    if (tid == 0) {
        stats[2 * n] = lse;
        stats[2 * n + 1] = h;
    }
}
