// variants: F32 F16 Q8 Q4
#version 450
#include "layouts/push_constants.h"
#include "layouts/block_params.h"
// X[t][:] = row tokens[t] of the embedding table, dequantized.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Weights { uint W[]; };
layout(std430, binding = 1) readonly buffer Scales { float scales[]; };
layout(std430, binding = 2) readonly buffer Params { BlockParams P; };
layout(std430, binding = 3) writeonly buffer Output { float X[]; };
layout(push_constant) uniform PushBlock { EmbedPush p; };
#include "weights.glsl"

void main() {
    const uint t = gl_WorkGroupID.y;
    const uint wi = gl_GlobalInvocationID.x;
    const uint words = p.dim / EPW;
    if (t >= P.count || wi >= words) return;
    const uint token = P.tokens[t];
    float v[EPW];
    decode_word(W[token * words + wi], token * p.dim + wi * EPW, p.group_shift, v);
    for (uint k = 0; k < EPW; ++k) X[t * p.dim + wi * EPW + k] = v[k];
}
