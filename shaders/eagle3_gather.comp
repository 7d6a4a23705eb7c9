#version 450
#include "layouts/block_params.h"
#include "layouts/eagle_inputs.h"
#include "layouts/push_constants.h"
// The hidden input rows of EAGLE-3's draft layer, each from its token's source: the target's
// feature at a committed slot (the fused layers' inputs, p.dim = their total width) or a row of
// the output store (the layer's own earlier prediction, p.dim = the hidden size). A block's
// tokens all come from one kind of source.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer TargetFeatures { float TF[]; };  // (ctx, width)
layout(std430, binding = 1) readonly buffer Store { float S[]; };            // (rows, width)
layout(std430, binding = 2) readonly buffer Inputs { EagleInputs I; };
layout(std430, binding = 3) readonly buffer Params { BlockParams P; };
layout(std430, binding = 4) writeonly buffer Output { float X[]; };          // (T, width)
layout(push_constant) uniform PushBlock { RowPush p; };

void main() {
    const uint t = gl_WorkGroupID.y, i = gl_GlobalInvocationID.x;
    if (t >= P.count || i >= p.dim) return;
    const uint src = I.source[t];
    X[t * p.dim + i] = (src & EAGLE_FROM_TARGET) != 0u ? TF[(src & ~EAGLE_FROM_TARGET) * p.dim + i] : S[src * p.dim + i];
}
