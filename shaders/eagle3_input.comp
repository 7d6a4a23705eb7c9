#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "layouts/push_constants.h"
// EAGLE-3's attention input: X[t] = [input_norm(E[t]) ; hidden_norm(H[t])], the token's embedding
// first, each RMS-normalised with its own gain. One subgroup per token, as rmsnorm.comp.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Embeddings { float E[]; };  // (T, dim)
layout(std430, binding = 1) readonly buffer Hidden { float H[]; };      // (T, dim)
layout(std430, binding = 2) readonly buffer InputGain { float GE[]; };
layout(std430, binding = 3) readonly buffer HiddenGain { float GH[]; };
layout(std430, binding = 4) writeonly buffer Output { float X[]; };     // (T, 2 dim)
layout(push_constant) uniform PushBlock { RmsnormPush p; };

void main() {
    const uint t = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
    if (t >= p.n_tokens) return;  // uniform across the subgroup
    const uint lane = gl_SubgroupInvocationID, S = gl_SubgroupSize, d = p.dim;
    float se = 0.0, sh = 0.0;
    for (uint i = lane; i < d; i += S) {
        se += E[t * d + i] * E[t * d + i];
        sh += H[t * d + i] * H[t * d + i];
    }
    const float re = inversesqrt(subgroupAdd(se) / float(d) + p.eps);
    const float rh = inversesqrt(subgroupAdd(sh) / float(d) + p.eps);
    for (uint i = lane; i < d; i += S) {
        X[t * 2 * d + i] = GE[i] * (E[t * d + i] * re);
        X[t * 2 * d + d + i] = GH[i] * (H[t * d + i] * rh);
    }
}
