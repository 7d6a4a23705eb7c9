#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "layouts/push_constants.h"
// out[t] = index of the largest logit of token t (the lowest index among equals, as the CPU does).
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Logits { float L[]; };
layout(std430, binding = 1) writeonly buffer Out { uint out_token[]; };
layout(push_constant) uniform PushBlock { ArgmaxPush p; };
shared float best_v[64];
shared uint best_i[64];

void main() {
    const uint t = gl_WorkGroupID.x;
    if (t >= p.n_tokens) return;
    const uint tid = gl_LocalInvocationID.x;
    float v = -3.4e38;
    uint idx = 0xffffffffu;
    for (uint i = tid; i < p.vocab; i += 64) {
        float x = L[t * p.vocab + i];
        if (x > v) v = x, idx = i;
    }
    const float m = subgroupMax(v);
    const uint mi = subgroupMin(v == m ? idx : 0xffffffffu);
    if (subgroupElect()) {
        best_v[gl_SubgroupID] = m;
        best_i[gl_SubgroupID] = mi;
    }
    barrier();
    if (tid == 0) {
        float bv = best_v[0];
        uint bi = best_i[0];
        for (uint s = 1; s < gl_NumSubgroups; ++s)
            if (best_v[s] > bv || (best_v[s] == bv && best_i[s] < bi)) bv = best_v[s], bi = best_i[s];
        out_token[t] = bi;
    }
}
