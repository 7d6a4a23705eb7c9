// variants: _ TEXEL
#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_control_flow_attributes : require
#include "layouts/push_constants.h"
#include "layouts/block_params.h"
// CPU drivers: one subgroup per head and run of TOKENS_PER_SUBGROUP block tokens computes
// softmax(scale q.K) V over the cache prefix [0, base) (the window's slots as its mask says)
// and the block tokens the mask lets each token see (itself and, in a tree, its ancestors; in a
// prompt, everything before it); on a local layer only keys less than p.window positions back,
// slot s of its ring cache in row s % cache_rows. Subgroup reductions only: no workgroup barriers, which CPU
// drivers such as lavapipe pay for dearly. GPUs run attention_split.comp instead.
layout(local_size_x = 64) in;
layout(std430, binding = 3) readonly buffer Params { BlockParams P; };
layout(std430, binding = 4) writeonly buffer Output { float O[]; };  // [T][dim]
layout(push_constant) uniform PushBlock { AttentionPush p; };

// The head size (a multiple of 4): one pass with a running (online) softmax per lane, merged
// across the subgroup at the end: no scores buffer and no barrier, and q, K and V read four
// floats per load (each load is an instruction per lane there).
layout(constant_id = 0) const uint ONE_PASS_HEAD_DIM = 0;
const uint HD4 = ONE_PASS_HEAD_DIM / 4;
layout(std430, binding = 0) readonly buffer QKV4 { vec4 qkv4[]; };
layout(std430, binding = 1) readonly buffer KCache4 { vec4 kc4[]; };
layout(std430, binding = 2) readonly buffer VCache4 { vec4 vc4[]; };
// The TEXEL variant reads the cache's keys and values, q and the mask rows as texels (bindings 5
// to 8): a CPU driver fetches a texel for every lane with one gather, where a storage load at an
// address it cannot prove uniform (anything derived from the workgroup) is a loop over the lanes.
#if defined(VARIANT_TEXEL)
#define ATTENTION_TEXEL_MASKS
layout(binding = 5) uniform samplerBuffer KeyTexels;
layout(binding = 6) uniform samplerBuffer ValueTexels;
layout(binding = 7) uniform samplerBuffer QkvTexels;
layout(binding = 8) uniform usamplerBuffer ParamTexels;
vec4 key4(uint i) { return texelFetch(KeyTexels, int(i)); }
vec4 value4(uint i) { return texelFetch(ValueTexels, int(i)); }
vec4 qkv4_at(uint i) { return texelFetch(QkvTexels, int(i)); }
uvec4 mask_row(uint t) { return texelFetch(ParamTexels, int(BLOCK_MASK_TEXEL + t)); }
uvec4 window_row(uint t) { return texelFetch(ParamTexels, int(BLOCK_WINDOW_MASK_TEXEL + t)); }
#else
vec4 key4(uint i) { return kc4[i]; }
vec4 value4(uint i) { return vc4[i]; }
vec4 qkv4_at(uint i) { return qkv4[i]; }
#endif

#include "attention_mask.glsl"

// CPU drivers, blocks of tokens (trees, prompts): a subgroup takes this many tokens of one head,
// so each key and value is fetched once for all of them (the fetches, not the arithmetic, cost
// the most there). 1 for single tokens.
layout(constant_id = 1) const uint TOKENS_PER_SUBGROUP = 1;
const uint TB = TOKENS_PER_SUBGROUP;

// Tokens [t0, t0 + TB) of head h (those past the block compute a copy of the last one and store
// nothing).
void one_pass(uint t0, uint h, uint base, uint free_end, uint n_keys, uint kv_off, float scale) {
    const uint lane = gl_SubgroupInvocationID, S = gl_SubgroupSize, count = P.count;
    const int window = int(p.window);
    vec4 q[TB * HD4 + 1], o[TB * HD4 + 1];
    float m[TB + 1], l[TB + 1];
    uvec4 window_bits[TB + 1], block_bits[TB + 1];
    int pos[TB + 1];
    uint first[TB + 1];  // a local layer's first cached slot in the token's window
    uint first_min = free_end;
    [[unroll]] for (uint j = 0; j < TB; ++j) {
        const uint t = min(t0 + j, count - 1);
        pos[j] = int(P.positions[t]);
        first[j] = window > 0 && pos[j] >= window ? uint(pos[j] + 1 - window) : 0u;
        first_min = min(first_min, first[j]);
        const uint q_off = t * (p.dim + 2 * p.kv_dim) + h * p.head_dim;
        [[unroll]] for (uint d = 0; d < HD4; ++d) {
            q[j * HD4 + d] = qkv4_at(q_off / 4u + d) * scale;
            o[j * HD4 + d] = vec4(0.0);
        }
        m[j] = -3.0e38;
        l[j] = 0.0;
        window_bits[j] = window_row(t);  // each token's mask rows read once, before any loop
        block_bits[j] = mask_row(t);
    }
    // Three passes: the slots every token sees (no mask; a local layer's window permitting), the
    // drafting window's, the block's own tokens.
    [[unroll]] for (uint pass = 0; pass < 3; ++pass) {
        const uint begin = pass == 0 ? first_min : pass == 1 ? free_end : base;
        const uint end = pass == 0 ? free_end : pass == 1 ? base : n_keys;
        for (uint s = begin + lane; s < end; s += S) {
            bool sees[TB + 1];
            bool any = false;
            const int key_pos = pass < 2 || window == 0 ? int(s) : int(P.positions[s - base]);
            [[unroll]] for (uint j = 0; j < TB; ++j) {
                sees[j] = (pass == 0 || row_bit(pass == 1 ? window_bits[j] : block_bits[j], s - begin)) &&
                          (pass == 2 ? window == 0 || pos[j] - key_pos < window : s >= first[j]);
                any = any || sees[j];
            }
            if (!any) continue;
            const uint row = s < p.cache_rows ? s : s % p.cache_rows;
            const uint k = (kv_off + row * p.kv_dim) / 4u;
            vec4 keys[HD4 + 1], values[HD4 + 1];
            [[unroll]] for (uint d = 0; d < HD4; ++d) {
                keys[d] = key4(k + d);
                values[d] = value4(k + d);
            }
            [[unroll]] for (uint j = 0; j < TB; ++j) {
                float score = 0.0;
                [[unroll]] for (uint d = 0; d < HD4; ++d) score += dot(q[j * HD4 + d], keys[d]);
                // One exponential a key: exp(-|score - m|) rescales the old sums when the maximum
                // grows, else weighs the new value (a CPU driver pays ~15 instructions an exp).
                const float x = exp(-abs(score - m[j]));
                const bool grows = score > m[j];
                const float c = !sees[j] ? 1.0 : grows ? x : 1.0, e = !sees[j] ? 0.0 : grows ? 1.0 : x;
                l[j] = l[j] * c + e;
                [[unroll]] for (uint d = 0; d < HD4; ++d) o[j * HD4 + d] = o[j * HD4 + d] * c + e * values[d];
                m[j] = sees[j] ? max(m[j], score) : m[j];
            }
        }
    }
    [[unroll]] for (uint j = 0; j < TB; ++j) {
        const float c = exp(m[j] - subgroupMax(m[j]));  // 0 for a lane that saw no key
        const float inv = 1.0 / subgroupAdd(l[j] * c);
        const uint t = t0 + j;
        [[unroll]] for (uint d = 0; d < HD4; ++d) {
            const vec4 v = subgroupAdd(o[j * HD4 + d] * c) * inv;
            if (t < count && subgroupElect())
                [[unroll]] for (uint i = 0; i < 4u; ++i) O[t * p.dim + h * p.head_dim + 4u * d + i] = v[i];
        }
    }
}

void main() {
    const uint pair = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
    const uint h = pair % p.n_heads, t = pair / p.n_heads * TB;  // the (first) block token
    if (t >= P.count) return;  // uniform across the subgroup
    const uint base = P.base;
    const uint n_keys = base + P.count;
    const uint kv_off = p.cache_offset + (h / p.kv_mul) * p.head_dim;
    const float scale = p.scale;
    const uint free_end = base - P.window;
    one_pass(t, h, base, free_end, n_keys, kv_off, scale);
}
