#version 450
#include "layouts/block_params.h"
#include "layouts/push_constants.h"
// The residual stream entering a target layer, kept in the feature cache at each block token's
// slot (P.base + t) beside the other captured layers' rows: EAGLE-3's feature of a position.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Input { float X[]; };      // (T, dim)
layout(std430, binding = 1) writeonly buffer Features { float F[]; };  // (ctx, stride)
layout(std430, binding = 2) readonly buffer Params { BlockParams P; };
layout(push_constant) uniform PushBlock { FeatureStorePush p; };

void main() {
    const uint t = gl_WorkGroupID.y, i = gl_GlobalInvocationID.x;
    if (t >= P.count || i >= p.dim) return;
    F[(P.base + t) * p.stride + p.offset + i] = X[t * p.dim + i];
}
