// variants: _ TEXEL
#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_control_flow_attributes : require
#include "layouts/push_constants.h"
// out[t] = index of the largest logit of token t (the lowest index among equals, as the CPU does).
// One subgroup per token, subgroup reductions only: a workgroup barrier makes a CPU driver such as
// lavapipe switch between all the workgroup's subgroups.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Logits { float L[]; };
layout(std430, binding = 1) writeonly buffer Out { uint out_token[]; };
layout(push_constant) uniform PushBlock { ArgmaxPush p; };
#include "logit_rows.glsl"

void main() {
    const uint t = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
    if (t >= p.n_tokens) return;  // uniform across the subgroup
    float v = -3.4e38;
    uint idx = 0xffffffffu;  // stays so for a row of NaNs (the CPU's -1)
    for (uint i = gl_SubgroupInvocationID; i < p.vocab / PER_LOAD; i += gl_SubgroupSize) {
        const vec4 x = logits_at(t, i);
        [[unroll]] for (uint c = 0; c < PER_LOAD; ++c)
            if (x[c] > v) v = x[c], idx = i * PER_LOAD + c;  // a lane's indices rise: ties keep the first
    }
    const float m = subgroupMax(v);
    const uint first = subgroupMin(v == m ? idx : 0xffffffffu);
    if (subgroupElect()) out_token[t] = first;
}
