// variants: _ TEXEL
#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_control_flow_attributes : require
#include "layouts/push_constants.h"
// out[t] = index of the largest logit of token t (the lowest index among equals, as the CPU does).
// CPU drivers: one subgroup per token, subgroup reductions only (a workgroup barrier makes a CPU
// driver such as lavapipe switch between all the workgroup's subgroups). GPUs (WHOLE_WORKGROUP):
// a workgroup of the host's width per token, so a row is read by hundreds of lanes at once rather
// than by one subgroup walking it a thousand loads deep.
layout(local_size_x = 64, local_size_x_id = 0) in;  // or the host's width with WHOLE_WORKGROUP
layout(constant_id = 1) const uint WHOLE_WORKGROUP = 0;
const uint MAX_SUBGROUPS = 64;  // the host keeps width / subgroup size within it
shared float best_s[MAX_SUBGROUPS];
shared uint index_s[MAX_SUBGROUPS];
layout(std430, binding = 0) readonly buffer Logits { float L[]; };
layout(std430, binding = 1) writeonly buffer Out { uint out_token[]; };
layout(push_constant) uniform PushBlock { ArgmaxPush p; };
#include "logit_rows.glsl"

// The largest logit of row t among the loads lane, lane + step, ... and its lowest index, reduced
// over the subgroup (every lane gets both).
void subgroup_best(uint t, uint lane, uint step, out float best, out uint first) {
    float v = -3.4e38;
    uint idx = 0xffffffffu;  // stays so for a row of NaNs (the CPU's -1)
    for (uint i = lane; i < p.vocab / PER_LOAD; i += step) {
        const vec4 x = logits_at(t, i);
        [[unroll]] for (uint c = 0; c < PER_LOAD; ++c)
            if (x[c] > v) v = x[c], idx = i * PER_LOAD + c;  // a lane's indices rise: ties keep the first
    }
    best = subgroupMax(v);
    first = subgroupMin(v == best ? idx : 0xffffffffu);
}

void main() {
    float best;
    uint first;
    if (WHOLE_WORKGROUP == 0) {
        const uint t = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
        if (t >= p.n_tokens) return;  // uniform across the subgroup
        subgroup_best(t, gl_SubgroupInvocationID, gl_SubgroupSize, best, first);
        if (subgroupElect()) out_token[t] = first;
        return;
    }
    const uint t = gl_WorkGroupID.x;
    if (t >= p.n_tokens) return;  // uniform across the workgroup
    subgroup_best(t, gl_LocalInvocationID.x, gl_WorkGroupSize.x, best, first);
    if (subgroupElect()) best_s[gl_SubgroupID] = best, index_s[gl_SubgroupID] = first;
    memoryBarrierShared();
    barrier();
    if (gl_LocalInvocationID.x != 0) return;
    for (uint s = 1; s < gl_NumSubgroups; ++s)
        if (best_s[s] > best || (best_s[s] == best && index_s[s] < first)) best = best_s[s], first = index_s[s];
    out_token[t] = first;
}
