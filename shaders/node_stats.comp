// variants: _ TEXEL
#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_control_flow_attributes : require
#include "layouts/push_constants.h"
// Per block token, over its logits at temperature T: the log-normaliser and the entropy as
// FasterDecoding/Medusa's typical acceptance computes it (evaluate_posterior:
// -sum p * log(p + 1e-5)), so the CPU's acceptance rules need not read whole rows.
// One subgroup per token, subgroup reductions only: a workgroup barrier makes a CPU driver such as
// lavapipe switch between all the workgroup's subgroups.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Logits { float L[]; };
layout(std430, binding = 1) writeonly buffer Stats { float stats[]; };  // [token][2]: lse_T, entropy_T
layout(push_constant) uniform PushBlock { NodeStatsPush p; };
#include "logit_rows.glsl"

void main() {
    const uint n = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
    if (n >= p.n_tokens) return;  // uniform across the subgroup
    const uint lane = gl_SubgroupInvocationID, loads = p.vocab / PER_LOAD;
    const float inv_t = 1.0 / (p.temperature > 0.0 ? p.temperature : 1.0);
    // The maximum and the sum of exponentials in one pass (rescaled as the maximum grows).
    float m = -3.4e38, s = 0.0;
    for (uint i = lane; i < loads; i += gl_SubgroupSize) {
        const vec4 x = logits_at(n, i) * inv_t;
        float m_new = m;
        [[unroll]] for (uint c = 0; c < PER_LOAD; ++c) m_new = max(m_new, x[c]);
        s *= exp(m - m_new);
        [[unroll]] for (uint c = 0; c < PER_LOAD; ++c) s += exp(x[c] - m_new);
        m = m_new;
    }
    const float top = subgroupMax(m);
    const float lse = top + log(subgroupAdd(s * exp(m - top)));  // 0 from a lane that read nothing
    float h = 0.0;
    for (uint i = lane; i < loads; i += gl_SubgroupSize) {
        const vec4 x = logits_at(n, i) * inv_t;
        [[unroll]] for (uint c = 0; c < PER_LOAD; ++c) {
            const float pr = exp(x[c] - lse);
            h -= pr * log(pr + 1e-5);
        }
    }
    h = subgroupAdd(h);
    if (subgroupElect()) {
        stats[2 * n] = lse;
        stats[2 * n + 1] = h;
    }
}
