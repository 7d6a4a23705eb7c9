#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "layouts/block_params.h"
#include "layouts/push_constants.h"
// Y[t][:] = G * X[t][:] / rms(X[t][:]): the final norm, kept as its own output because the
// Medusa heads read this hidden state as well as the classifier. With store_features it also
// lands in the feature cache at the token's cache slot (P.base + t), where EAGLE's layer reads
// the target's features of every committed position. With accumulate it adds the normed row to
// Y's instead (a post-norm before the residual add: Gemma's). One subgroup per token, subgroup reductions
// only: a workgroup barrier makes a CPU driver such as lavapipe switch between all the
// workgroup's subgroups.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Input { float X[]; };
layout(std430, binding = 1) readonly buffer Gain { float G[]; };
layout(std430, binding = 2) buffer Output { float Y[]; };
layout(std430, binding = 3) writeonly buffer Features { float F[]; };  // [ctx][dim]
layout(std430, binding = 4) readonly buffer Params { BlockParams P; };
layout(push_constant) uniform PushBlock { RmsnormPush p; };

void main() {
    const uint t = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
    if (t >= p.n_tokens) return;  // uniform across the subgroup
    const uint lane = gl_SubgroupInvocationID, S = gl_SubgroupSize;
    float ss = 0.0;
    for (uint i = lane; i < p.dim; i += S) ss += X[t * p.dim + i] * X[t * p.dim + i];
    const float r = inversesqrt(subgroupAdd(ss) / float(p.dim) + p.eps);
    for (uint i = lane; i < p.dim; i += S) {
        const float y = G[i] * (X[t * p.dim + i] * r);
        if (p.accumulate != 0u) Y[t * p.dim + i] += y;
        else Y[t * p.dim + i] = y;
        if (p.store_features != 0u) F[(P.base + t) * p.dim + i] = y;
    }
}
