#version 450
#include "layouts/block_params.h"
#include "layouts/eagle_inputs.h"
#include "layouts/push_constants.h"
// Keeps the EAGLE layer's outputs (its predicted features) as rows of the output store, where
// the next level of the draft tree reads its parents' features.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Outputs { float Y[]; };  // (T, dim)
layout(std430, binding = 1) writeonly buffer Store { float S[]; };   // (rows, dim)
layout(std430, binding = 2) readonly buffer Inputs { EagleInputs I; };
layout(std430, binding = 3) readonly buffer Params { BlockParams P; };
layout(push_constant) uniform PushBlock { RowPush p; };

void main() {
    const uint t = gl_WorkGroupID.y, i = gl_GlobalInvocationID.x;
    if (t >= P.count || i >= p.dim) return;
    S[(I.store_base + t) * p.dim + i] = Y[t * p.dim + i];
}
