#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "layouts/push_constants.h"
#include "layouts/block_params.h"
#include "rope.glsl"
// rope_kv.comp for models that normalise each head of q and k before RoPE (Qwen3, Gemma 3): one
// subgroup per block token and head (q's n_heads heads, then k's n_kv_heads, each of which also
// writes its v head) adds the biases, RMS-normalises the head with its gains (q_norm or k_norm),
// rotates it and writes it back (q) or into the layer's cache (k, v): the norms cost no pass of
// their own. A pair's two dimensions sit in neighbouring lanes, so a shuffle brings each its partner.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer QKV { float qkv[]; };  // [T][dim + 2*kv_dim]
layout(std430, binding = 1) writeonly buffer KCache { float kc[]; };
layout(std430, binding = 2) writeonly buffer VCache { float vc[]; };
layout(std430, binding = 3) readonly buffer Params { BlockParams P; };
layout(std430, binding = 4) readonly buffer Bias { float bias[]; };        // (dim + 2 kv_dim)
layout(std430, binding = 5) readonly buffer Factors { float factors[]; };  // (rotated / 2)
layout(std430, binding = 6) readonly buffer Norms { float norms[]; };      // q_norm (head_dim), then k_norm
layout(push_constant) uniform PushBlock { RopePush p; };

void main() {
    const uint heads = p.n_heads + p.n_kv_heads;
    const uint item = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
    const uint t = item / heads, h = item % heads;
    if (t >= P.count) return;  // uniform across the subgroup
    const uint lane = gl_SubgroupInvocationID, S = gl_SubgroupSize, hd = p.head_dim;
    const bool is_q = h < p.n_heads;
    const uint kv_head = h - p.n_heads;
    const uint row = t * (p.dim + 2 * p.kv_dim);
    const uint off = is_q ? h * hd : p.dim + kv_head * hd;
    float ss = 0.0;
    for (uint d = lane; d < hd; d += S) {
        const float v = qkv[row + off + d] + bias[off + d];
        ss += v * v;
    }
    const float r = inversesqrt(subgroupAdd(ss) / float(hd) + p.eps);
    const uint gains = is_q ? 0u : hd;
    const float pos = float(P.positions[t]) / p.position_scale;
    const uint cache_row = p.cache_offset + ((P.base + t) % p.cache_rows) * p.kv_dim;
    for (uint d0 = 0; d0 < hd; d0 += S) {  // every lane takes part in each shuffle
        const uint d = d0 + lane;
        const bool live = d < hd;
        const float v = live ? (qkv[row + off + d] + bias[off + d]) * r * norms[gains + d] : 0.0;
        const float partner = subgroupShuffleXor(v, 1u);
        if (!live) continue;
        float r_out = v;
        if (d < p.rotated) {
            const vec2 cs = rope_cos_sin(d & ~1u, p.rotated, p.theta, factors[d / 2], pos, p.attn_factor);
            r_out = (d & 1u) == 0u ? v * cs.x - partner * cs.y : partner * cs.y + v * cs.x;
        }
        if (is_q) qkv[row + off + d] = r_out;
        else kc[cache_row + kv_head * hd + d] = r_out;
    }
    if (!is_q) {
        const uint v_off = p.dim + p.kv_dim + kv_head * hd;
        for (uint d = lane; d < hd; d += S) vc[cache_row + kv_head * hd + d] = qkv[row + v_off + d] + bias[v_off + d];
    }
}
