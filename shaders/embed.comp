// variants: F32 F16 BF16 Q8 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_NL IQ4_XS
#version 450
#extension GL_EXT_control_flow_attributes : require
#include "layouts/push_constants.h"
#include "layouts/block_params.h"
// X[t][:] = row tokens[t] of the embedding table, dequantized, times p.scale (Gemma's sqrt(dim)).
layout(local_size_x = 64) in;
// Weights are bindings 0 and 1 (weights.glsl).
layout(std430, binding = 2) readonly buffer Params { BlockParams P; };
layout(std430, binding = 3) writeonly buffer Output { float X[]; };
layout(push_constant) uniform PushBlock { EmbedPush p; };
#include "weights.glsl"

void main() {
    const uint t = gl_WorkGroupID.y;
    const uint wi = gl_GlobalInvocationID.x;
    const uint words = p.dim / EPW;
    if (t >= P.count || wi >= words) return;
    // Tokens drafted on the GPU come here unchecked: the argmax or top-k of NaN logits is
    // 0xffffffff. Its row is garbage either way (the host never accepts such a token), but a read
    // past the table could fault the device.
    const uint token = min(P.tokens[t], p.rows - 1u);
    float v[EPW];
    weight_word(token, wi, p.dim, p.group_shift, v);
    for (uint k = 0; k < EPW; ++k) X[t * p.dim + wi * EPW + k] = v[k] * p.scale;
}
