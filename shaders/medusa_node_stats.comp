#version 450
// Per tree node, over its logits: the log-normaliser at temperature T (T = 1 when greedy)
// and the entropy of that distribution, for the acceptance rules.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Logits { float L[]; };
layout(std430, binding = 1) writeonly buffer Stats { float stats[]; };  // [node][2]: lse_T, entropy_T
layout(push_constant) uniform Push {
    uint vocab;
    uint n_nodes;
    float temperature;
} p;
#include "reduce.glsl"

void main() {
    const uint n = gl_WorkGroupID.x, tid = gl_LocalInvocationID.x;
    if (n >= p.n_nodes) return;
    const float inv_t = 1.0 / (p.temperature > 0.0 ? p.temperature : 1.0);
    const uint off = n * p.vocab;
    float m = -3.4e38;
    for (uint i = tid; i < p.vocab; i += 64) m = max(m, L[off + i] * inv_t);
    m = workgroup_max(m);
    float s = 0.0, sx = 0.0;
    for (uint i = tid; i < p.vocab; i += 64) {
        const float x = L[off + i] * inv_t - m;
        const float e = exp(x);
        s += e;
        sx += e * x;
    }
    const float z = workgroup_sum(s);
    const float ex = workgroup_sum(sx);
    if (tid == 0) {
        stats[2 * n] = m + log(z);
        stats[2 * n + 1] = log(z) - ex / z;  // H = log Z - E[x]
    }
}
