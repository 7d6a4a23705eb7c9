// variants: _ TEXEL
#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_control_flow_attributes : require
#include "layouts/push_constants.h"
// Per block token, over its logits at temperature T: the log-normaliser and the entropy as
// FasterDecoding/Medusa's typical acceptance computes it (evaluate_posterior:
// -sum p * log(p + 1e-5)), so the CPU's acceptance rules need not read whole rows.
// CPU drivers: one subgroup per token, subgroup reductions only (a workgroup barrier makes a CPU
// driver such as lavapipe switch between all the workgroup's subgroups). GPUs (WHOLE_WORKGROUP):
// a workgroup of the host's width per token, as argmax.comp.
layout(local_size_x = 64, local_size_x_id = 0) in;  // or the host's width with WHOLE_WORKGROUP
layout(constant_id = 1) const uint WHOLE_WORKGROUP = 0;
const uint MAX_SUBGROUPS = 64;  // the host keeps width / subgroup size within it
shared float max_s[MAX_SUBGROUPS], sum_s[MAX_SUBGROUPS];
layout(std430, binding = 0) readonly buffer Logits { float L[]; };
layout(std430, binding = 1) writeonly buffer Stats { float stats[]; };  // [token][2]: lse_T, entropy_T
layout(push_constant) uniform PushBlock { NodeStatsPush p; };
#include "logit_rows.glsl"

// The sum over the workgroup of each subgroup's `v` (every lane gets it); `v` is subgroup-uniform.
float workgroup_sum(float v) {
    if (subgroupElect()) sum_s[gl_SubgroupID] = v;
    memoryBarrierShared();
    barrier();
    float total = 0.0;
    for (uint s = 0; s < gl_NumSubgroups; ++s) total += sum_s[s];
    memoryBarrierShared();
    barrier();  // before sum_s is written again
    return total;
}

void main() {
    const bool whole = WHOLE_WORKGROUP != 0;
    const uint n = whole ? gl_WorkGroupID.x : gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
    if (n >= p.n_tokens) return;  // uniform across the subgroup (the workgroup when whole)
    const uint lane = whole ? gl_LocalInvocationID.x : gl_SubgroupInvocationID, loads = p.vocab / PER_LOAD;
    const uint step = whole ? gl_WorkGroupSize.x : gl_SubgroupSize;
    const float inv_t = 1.0 / (p.temperature > 0.0 ? p.temperature : 1.0);
    // The maximum and the sum of exponentials in one pass (rescaled as the maximum grows).
    float m = -3.4e38, s = 0.0;
    for (uint i = lane; i < loads; i += step) {
        const vec4 x = logits_at(n, i) * inv_t;
        float m_new = m;
        [[unroll]] for (uint c = 0; c < PER_LOAD; ++c) m_new = max(m_new, x[c]);
        s *= exp(m - m_new);
        [[unroll]] for (uint c = 0; c < PER_LOAD; ++c) s += exp(x[c] - m_new);
        m = m_new;
    }
    float top = subgroupMax(m);
    float sum = subgroupAdd(s * exp(m - top));  // 0 from a lane that read nothing
    if (whole) {
        if (subgroupElect()) max_s[gl_SubgroupID] = top;
        memoryBarrierShared();
        barrier();
        float largest = max_s[0];
        for (uint g = 1; g < gl_NumSubgroups; ++g) largest = max(largest, max_s[g]);
        sum = workgroup_sum(sum * exp(top - largest));
        top = largest;
    }
    const float lse = top + log(sum);
    float h = 0.0;
    for (uint i = lane; i < loads; i += step) {
        const vec4 x = logits_at(n, i) * inv_t;
        [[unroll]] for (uint c = 0; c < PER_LOAD; ++c) {
            const float pr = exp(x[c] - lse);
            h -= pr * log(pr + 1e-5);
        }
    }
    h = subgroupAdd(h);
    if (whole) h = workgroup_sum(h);
    if (whole ? lane == 0 : subgroupElect()) {
        stats[2 * n] = lse;
        stats[2 * n + 1] = h;
    }
}
