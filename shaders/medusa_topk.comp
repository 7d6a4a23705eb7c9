// variants: _ TEXEL
#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_control_flow_attributes : require
#include "layouts/push_constants.h"
// One workgroup per Medusa head: its top-k tokens by logit (ties to the lower id) and their
// softmax probabilities, written into the candidate list the tree is gathered from.
// The workgroup's first subgroup does it alone, with subgroup reductions only: each round takes
// the best token ranked after the previous round's pick, so there is no list of picked tokens
// and no workgroup barrier (a CPU driver such as lavapipe switches between every subgroup of the
// workgroup at each barrier). Lanes read four logits per load: a head's logits start at a
// multiple of 4 floats (the host's stride). The TEXEL variant reads them as RGBA32F texels
// (binding 3): a CPU driver gathers them, where storage loads at addresses derived from the
// workgroup are a loop over the lanes.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer HeadLogits { vec4 L4[]; };
layout(std430, binding = 1) buffer Candidates { uint cand_token[]; };
layout(std430, binding = 2) buffer CandidateProbs { float cand_prob[]; };
layout(push_constant) uniform PushBlock { TopkPush p; };
#if defined(VARIANT_TEXEL)
layout(binding = 3) uniform samplerBuffer HeadLogitTexels;
vec4 quad_at(uint i) { return texelFetch(HeadLogitTexels, int(i)); }
#else
vec4 quad_at(uint i) { return L4[i]; }
#endif

void main() {
    if (gl_SubgroupID != 0) return;
    const uint k = gl_WorkGroupID.x, lane = gl_SubgroupInvocationID, S = gl_SubgroupSize;
    const uint off = k * p.stride / 4u, quads = (p.vocab + 3u) / 4u;
    float m = -3.4e38;
    for (uint i = lane; i < quads; i += S) {
        const vec4 v = quad_at(off + i);
        [[unroll]] for (uint c = 0; c < 4u; ++c)
            if (4u * i + c < p.vocab) m = max(m, v[c]);
    }
    m = subgroupMax(m);
    float s = 0.0;
    for (uint i = lane; i < quads; i += S) {
        const vec4 v = quad_at(off + i);
        [[unroll]] for (uint c = 0; c < 4u; ++c)
            if (4u * i + c < p.vocab) s += exp(v[c] - m);
    }
    const float z = subgroupAdd(s);
    float prev_v = 0.0;  // the last pick, in the order (logit descending, id ascending)
    uint prev_i = 0u;
    for (uint r = 0; r < p.topk; ++r) {
        float v = -3.4e38;
        uint idx = 0xffffffffu;
        for (uint i = lane; i < quads; i += S) {
            const vec4 q = quad_at(off + i);
            [[unroll]] for (uint c = 0; c < 4u; ++c) {
                const uint id = 4u * i + c;
                const float x = q[c];
                const bool after = r == 0u || x < prev_v || (x == prev_v && id > prev_i);
                if (id < p.vocab && after && (x > v || (x == v && id < idx))) v = x, idx = id;
            }
        }
        prev_v = subgroupMax(v);
        prev_i = subgroupMin(v == prev_v ? idx : 0xffffffffu);
        if (subgroupElect()) {
            cand_token[1 + k * p.topk + r] = prev_i;
            cand_prob[1 + k * p.topk + r] = exp(prev_v - m) / z;
        }
    }
}
