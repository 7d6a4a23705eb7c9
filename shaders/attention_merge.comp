#version 450
#include "layouts/push_constants.h"
#include "layouts/block_params.h"
// Merges attention_split.comp's p.splits partial results of each (block token, head): every
// split's sums and weight scaled by exp(its maximum - the largest), then divided by the total
// weight. A split that saw no key has weight 0 and counts for nothing.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Params { BlockParams P; };
layout(std430, binding = 1) readonly buffer Partials { float partial[]; };  // attention_split.comp's
layout(std430, binding = 2) writeonly buffer Output { float O[]; };        // [T][dim]
layout(push_constant) uniform PushBlock { AttentionPush p; };

// A split's scale: exp(its maximum, at `at`, - the largest); 0 for one that saw no key.
float weight(uint at, float m) { return exp(partial[at] - m); }

void main() {
    const uint pair = gl_WorkGroupID.x, h = pair % p.n_heads, t = pair / p.n_heads;
    if (t >= P.count) return;
    const uint hd = p.head_dim, stride = hd + 2, row = (t * p.n_heads + h) * p.ctx;
    float m = -3.0e38;
    for (uint s = 0; s < p.splits; ++s) m = max(m, partial[row + s * stride + hd]);
    float l = 0.0;
    for (uint s = 0; s < p.splits; ++s) l += partial[row + s * stride + hd + 1] * weight(row + s * stride + hd, m);
    for (uint d = gl_LocalInvocationID.x; d < hd; d += 64) {
        float acc = 0.0;
        for (uint s = 0; s < p.splits; ++s) acc += partial[row + s * stride + d] * weight(row + s * stride + hd, m);
        O[t * p.dim + h * hd + d] = acc / l;
    }
}
