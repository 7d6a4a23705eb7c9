#version 450
#include "layouts/push_constants.h"
#include "layouts/block_params.h"
#include "rope.glsl"
// Adds the q/k/v biases (Qwen2; zeros otherwise), rotates q and k of every block token by its
// position (llama2.c's adjacent-pair RoPE; pair i's frequency divided by Llama 3's rope_freqs[i],
// ones otherwise) and writes k and v into the layer's cache at slot base + t, so attention reads
// only the cache.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer QKV { float qkv[]; };  // [T][dim + 2*kv_dim]
layout(std430, binding = 1) writeonly buffer KCache { float kc[]; };
layout(std430, binding = 2) writeonly buffer VCache { float vc[]; };
layout(std430, binding = 3) readonly buffer Params { BlockParams P; };
layout(std430, binding = 4) readonly buffer Bias { float bias[]; };        // (dim + 2 kv_dim)
layout(std430, binding = 5) readonly buffer Factors { float factors[]; };  // (head_dim / 2)
layout(push_constant) uniform PushBlock { RopePush p; };

void main() {
    const uint t = gl_WorkGroupID.y;
    const uint id = gl_GlobalInvocationID.x;
    if (t >= P.count) return;
    const uint stride = p.dim + 2 * p.kv_dim;
    const uint row = t * stride;
    const uint slot = P.base + t;
    const float pos = float(P.positions[t]) / p.position_scale;
    const uint q_pairs = p.dim / 2, k_pairs = p.kv_dim / 2;
    if (id < q_pairs + k_pairs) {
        const bool is_q = id < q_pairs;
        const uint i = is_q ? 2 * id : 2 * (id - q_pairs);
        const float freq = rope_frequency(i, p.head_dim, p.theta, factors[(i % p.head_dim) / 2]);
        const float c = cos(pos * freq), s = sin(pos * freq);
        const uint off = (is_q ? 0 : p.dim) + i, src = row + off;
        const float v0 = qkv[src] + bias[off], v1 = qkv[src + 1] + bias[off + 1];
        const float r0 = v0 * c - v1 * s, r1 = v0 * s + v1 * c;
        if (is_q) {
            qkv[src] = r0;
            qkv[src + 1] = r1;
        } else {
            kc[p.cache_offset + slot * p.kv_dim + i] = r0;
            kc[p.cache_offset + slot * p.kv_dim + i + 1] = r1;
        }
    } else if (id < q_pairs + k_pairs + p.kv_dim) {
        const uint j = id - q_pairs - k_pairs;
        vc[p.cache_offset + slot * p.kv_dim + j] = qkv[row + p.dim + p.kv_dim + j] + bias[p.dim + p.kv_dim + j];
    }
}
