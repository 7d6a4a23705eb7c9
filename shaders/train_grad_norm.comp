#version 450
#include "layouts/push_constants.h"
// Partial sums of squares of the flat gradient, one per workgroup (256 of them), for global-norm clipping.
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer G_ { float G[]; };
layout(std430, binding = 1) buffer Part_ { float part[]; };
layout(push_constant) uniform PushBlock { TrainGradNormPush p; };
shared float red[256];
void main() {
    const uint t = gl_LocalInvocationID.x;
    float s = 0.0;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += gl_NumWorkGroups.x * 256) s += G[i] * G[i];
    red[t] = s;
    barrier();
    for (uint k = 128; k > 0; k >>= 1) {
        if (t < k) red[t] += red[t + k];
        barrier();
    }
    if (t == 0) part[gl_WorkGroupID.x] = red[0];
}
