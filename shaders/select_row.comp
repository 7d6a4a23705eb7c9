#version 450
#include "layouts/push_constants.h"
#include "layouts/kv_commit.h"
// Hands the final-norm hidden state of the last accepted node (block row path[kept - 1] of the
// last forward) to a drafter that runs on the device, such as the Medusa heads.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Commit { KvCommit C; };
layout(std430, binding = 1) readonly buffer Hidden { float hidden[]; };  // [T][dim]
layout(std430, binding = 2) writeonly buffer Selected { float selected[]; };  // [dim]
layout(push_constant) uniform PushBlock { RowPush p; };

void main() {
    const uint i = gl_GlobalInvocationID.x;
    if (i < p.dim) selected[i] = hidden[C.path[C.kept - 1] * p.dim + i];
}
