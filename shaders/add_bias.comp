#version 450
#include "layouts/block_params.h"
#include "layouts/push_constants.h"
// Y[t][:] += b for every block token (EAGLE's fc has a bias; the model's own layers have none).
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Rows { float Y[]; };  // (T, dim)
layout(std430, binding = 1) readonly buffer Bias { float b[]; };
layout(std430, binding = 2) readonly buffer Params { BlockParams P; };
layout(push_constant) uniform PushBlock { RowPush p; };

void main() {
    const uint t = gl_WorkGroupID.y, i = gl_GlobalInvocationID.x;
    if (t >= P.count || i >= p.dim) return;
    Y[t * p.dim + i] += b[i];
}
