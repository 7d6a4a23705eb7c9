#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "layouts/push_constants.h"
// One workgroup per Medusa head: its top-k tokens by logit (ties to the lower id) and their
// softmax probabilities, written into the candidate list the tree is gathered from.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer HeadLogits { float L[]; };  // [heads][stride]
layout(std430, binding = 1) buffer Candidates { uint cand_token[]; };
layout(std430, binding = 2) buffer CandidateProbs { float cand_prob[]; };
layout(push_constant) uniform PushBlock { TopkPush p; };
#include "reduce.glsl"
shared uint picked[32];
shared float best_v[64];
shared uint best_i[64];

void main() {
    const uint k = gl_WorkGroupID.x, tid = gl_LocalInvocationID.x;
    const uint off = k * p.stride;
    float m = -3.4e38;
    for (uint i = tid; i < p.vocab; i += 64) m = max(m, L[off + i]);
    m = workgroup_max(m);
    float s = 0.0;
    for (uint i = tid; i < p.vocab; i += 64) s += exp(L[off + i] - m);
    const float z = workgroup_sum(s);
    for (uint r = 0; r < p.topk; ++r) {
        float v = -3.4e38;
        uint idx = 0xffffffffu;
        for (uint i = tid; i < p.vocab; i += 64) {
            bool taken = false;
            for (uint q = 0; q < r; ++q) taken = taken || picked[q] == i;
            const float x = L[off + i];
            if (!taken && (x > v || (x == v && i < idx))) v = x, idx = i;
        }
        const float sm = subgroupMax(v);
        const uint si = subgroupMin(v == sm ? idx : 0xffffffffu);
        if (subgroupElect()) best_v[gl_SubgroupID] = sm, best_i[gl_SubgroupID] = si;
        barrier();
        if (tid == 0) {
            float bv = best_v[0];
            uint bi = best_i[0];
            for (uint g = 1; g < gl_NumSubgroups; ++g)
                if (best_v[g] > bv || (best_v[g] == bv && best_i[g] < bi)) bv = best_v[g], bi = best_i[g];
            picked[r] = bi;
            cand_token[1 + k * p.topk + r] = bi;
            cand_prob[1 + k * p.topk + r] = exp(bv - m) / z;
        }
        barrier();
    }
}
