#version 450
#include "layouts/block_params.h"
#include "layouts/eagle_inputs.h"
#include "layouts/push_constants.h"
// The EAGLE layer's input rows: X[t] = [e(token t) ; feature of token t], the embedding already
// expanded into E, the feature from the target's feature cache or from the output store.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Embeddings { float E[]; };        // (T, dim)
layout(std430, binding = 1) readonly buffer TargetFeatures { float TF[]; };   // (ctx, dim)
layout(std430, binding = 2) readonly buffer Store { float S[]; };             // (rows, dim)
layout(std430, binding = 3) readonly buffer Inputs { EagleInputs I; };
layout(std430, binding = 4) readonly buffer Params { BlockParams P; };
layout(std430, binding = 5) writeonly buffer Output { float X[]; };           // (T, 2 dim)
layout(push_constant) uniform PushBlock { RowPush p; };

void main() {
    const uint t = gl_WorkGroupID.y, i = gl_GlobalInvocationID.x;
    if (t >= P.count || i >= p.dim) return;
    const uint src = I.source[t];
    const float f = (src & EAGLE_FROM_TARGET) != 0u ? TF[(src & ~EAGLE_FROM_TARGET) * p.dim + i] : S[src * p.dim + i];
    X[t * 2 * p.dim + i] = E[t * p.dim + i];
    X[t * 2 * p.dim + p.dim + i] = f;
}
