#version 450
#include "layouts/push_constants.h"
#include "layouts/block_params.h"
#include "rope.glsl"
// Adds the q/k/v biases (Qwen2; zeros otherwise), rotates q and k of every block token by its
// position (llama2.c's adjacent-pair RoPE over each head's first `rotated` dimensions; pair i's
// frequency divided by rope factor i, ones otherwise) and writes k and v into the layer's cache
// at slot base + t (row (base + t) % cache_rows), so attention reads only the cache.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer QKV { float qkv[]; };  // [T][dim + 2*kv_dim]
layout(std430, binding = 1) writeonly buffer KCache { float kc[]; };
layout(std430, binding = 2) writeonly buffer VCache { float vc[]; };
layout(std430, binding = 3) readonly buffer Params { BlockParams P; };
layout(std430, binding = 4) readonly buffer Bias { float bias[]; };        // (dim + 2 kv_dim)
layout(std430, binding = 5) readonly buffer Factors { float factors[]; };  // (rotated / 2)
layout(push_constant) uniform PushBlock { RopePush p; };

void main() {
    const uint t = gl_WorkGroupID.y;
    const uint id = gl_GlobalInvocationID.x;
    if (t >= P.count) return;
    const uint stride = p.dim + 2 * p.kv_dim;
    const uint row = t * stride;
    const uint cache_row = p.cache_offset + ((P.base + t) % p.cache_rows) * p.kv_dim;
    const float pos = float(P.positions[t]) / p.position_scale;
    const uint q_pairs = p.dim / 2, k_pairs = p.kv_dim / 2;
    if (id < q_pairs + k_pairs) {
        const bool is_q = id < q_pairs;
        const uint i = is_q ? 2 * id : 2 * (id - q_pairs), d = i % p.head_dim;
        const uint off = (is_q ? 0 : p.dim) + i, src = row + off;
        float r0 = qkv[src] + bias[off], r1 = qkv[src + 1] + bias[off + 1];
        if (d < p.rotated) {
            const vec2 cs = rope_cos_sin(d, p.rotated, p.theta, factors[d / 2], pos, p.attn_factor);
            const float v0 = r0, v1 = r1;
            r0 = v0 * cs.x - v1 * cs.y;
            r1 = v0 * cs.y + v1 * cs.x;
        }
        if (is_q) {
            qkv[src] = r0;
            qkv[src + 1] = r1;
        } else {
            kc[cache_row + i] = r0;
            kc[cache_row + i + 1] = r1;
        }
    } else if (id < q_pairs + k_pairs + p.kv_dim) {
        const uint j = id - q_pairs - k_pairs;
        vc[cache_row + j] = qkv[row + p.dim + p.kv_dim + j] + bias[p.dim + p.kv_dim + j];
    }
}
