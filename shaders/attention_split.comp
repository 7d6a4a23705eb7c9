#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_control_flow_attributes : require
#include "layouts/push_constants.h"
#include "layouts/block_params.h"
// GPUs: softmax(scale q.K) V for one (block token, head) over one of p.splits equal ranges of
// the keys it may see (the cache prefix, the window's slots as its mask says, and the block
// tokens the mask lets it see; on a local layer only keys less than p.window positions back,
// slot s of its ring cache in row s % cache_rows). A workgroup takes WG keys at a time: a lane per key for the
// scores, lanes per output dimension for the values (each loop reads consecutive floats across
// the lanes), with a running softmax across the runs. Splitting the keys keeps every compute
// unit busy when a few heads read a long cache (flash-decoding): with one split the workgroup
// writes the output, with several each writes its sums, maximum and weight, and the last to
// finish merges them.
layout(local_size_x = 128) in;
const uint WG = gl_WorkGroupSize.x;
layout(std430, binding = 0) readonly buffer QKV { float qkv[]; };
layout(std430, binding = 1) readonly buffer KCache { float kc[]; };
layout(std430, binding = 1) readonly buffer KCache4 { vec4 kc4[]; };  // where head_dim is a multiple of 4
layout(std430, binding = 2) readonly buffer VCache { float vc[]; };
layout(std430, binding = 3) readonly buffer Params { BlockParams P; };
// [T][n_heads][ctx]: split s's head_dim sums, then its maximum and weight, at s * (head_dim + 2).
// Coherent: the last workgroup of a (token, head) reads what the others wrote.
layout(std430, binding = 4) coherent buffer Partials { float partial[]; };
layout(std430, binding = 5) writeonly buffer Output { float O[]; };  // [T][dim]
// Per (token, head): how many of its ranges have written their partials (zero between dispatches).
layout(std430, binding = 6) coherent buffer Arrivals { uint arrivals[]; };
layout(push_constant) uniform PushBlock { AttentionPush p; };
#include "attention_mask.glsl"

const uint MAX_HEAD_DIM = 512, DIMS_PER_LANE = MAX_HEAD_DIM / WG;
const float NONE = -3.0e38;  // the score of a key the token does not see

shared float q_s[MAX_HEAD_DIM];  // q / sqrt(head_dim)
shared float weight_s[WG];       // the run's exp(score - running maximum), a key a lane
shared float max_s[WG], sum_s[WG], out_s[WG];  // per-subgroup partials; lanes' sums per dimension
shared uint last_s;  // 1 in the workgroup that merges the ranges

float group_max(float v) {
    v = subgroupMax(v);
    if (subgroupElect()) max_s[gl_SubgroupID] = v;
    memoryBarrierShared();
    barrier();
    float r = max_s[0];
    for (uint i = 1; i < gl_NumSubgroups; ++i) r = max(r, max_s[i]);
    return r;
}

float group_sum(float v) {  // its barrier also publishes weight_s
    v = subgroupAdd(v);
    if (subgroupElect()) sum_s[gl_SubgroupID] = v;
    memoryBarrierShared();
    barrier();
    float r = 0.0;
    for (uint i = 0; i < gl_NumSubgroups; ++i) r += sum_s[i];
    return r;
}

// The cache row of slot s: a local layer's ring holds cache_rows slots.
uint slot_row(uint s) { return s < p.cache_rows ? s : s % p.cache_rows; }

float key_score(uint k, uint hd) {  // k: the key's first float
    float acc = 0.0;
    if ((hd & 3u) == 0 && (k & 3u) == 0)
        for (uint d = 0; d < hd; d += 4)
            acc += dot(vec4(q_s[d], q_s[d + 1], q_s[d + 2], q_s[d + 3]), kc4[(k + d) >> 2]);
    else
        for (uint d = 0; d < hd; ++d) acc += q_s[d] * kc[k + d];
    return acc;
}

void main() {
    const uint splits = max(p.splits, 1u);
    const uint split = gl_WorkGroupID.x % splits, pair = gl_WorkGroupID.x / splits;
    const uint h = pair % p.n_heads, t = pair / p.n_heads;
    if (t >= P.count) return;  // uniform across the workgroup
    const uint lane = gl_LocalInvocationID.x, hd = p.head_dim;
    const uint base = P.base, free_end = base - P.window;
    const uvec4 window_bits = window_row(t), block_bits = mask_row(t);
    // Keys past the last block token this one sees are skipped (a prompt's token sees none after it).
    const ivec4 top = findMSB(block_bits);
    const int last = top.w >= 0 ? 96 + top.w : top.z >= 0 ? 64 + top.z : top.y >= 0 ? 32 + top.y : top.x;
    const uint n_keys = base + uint(last + 1);
    // A local layer: cached slots before `first` are out of the window (slot s holds position s),
    // block tokens are checked by their positions.
    const int pos = int(P.positions[t]), window = int(p.window);
    const uint first = window > 0 && pos >= window ? uint(pos + 1 - window) : 0u;
    const uint k_begin = min(first, base);
    const uint per_split = (n_keys - k_begin + splits - 1) / splits;
    const uint k0 = min(n_keys, k_begin + split * per_split), k1 = min(n_keys, k0 + per_split);
    const uint kv_off = p.cache_offset + (h / p.kv_mul) * hd;
    const float scale = p.scale;
    const uint q_off = t * (p.dim + 2 * p.kv_dim) + h * hd;
    for (uint d = lane; d < hd; d += WG) q_s[d] = qkv[q_off + d] * scale;
    memoryBarrierShared();
    barrier();

    // The values' lanes: `groups` sets of `dim_lanes`, each set summing every groups-th key of a run.
    const uint dim_lanes = min(hd, WG), groups = WG / dim_lanes;
    const uint group = lane / dim_lanes, d0 = lane % dim_lanes;
    float o[DIMS_PER_LANE];
    [[unroll]] for (uint i = 0; i < DIMS_PER_LANE; ++i) o[i] = 0.0;
    float m = NONE, l = 0.0;
    for (uint r0 = k0; r0 < k1; r0 += WG) {
        const uint s = r0 + lane;
        const bool in_window = window == 0 || (s < base ? s >= first : pos - int(P.positions[s - base]) < window);
        const float score = s < k1 && in_window && visible(s, base, free_end, window_bits, block_bits)
                                ? key_score(kv_off + slot_row(s) * p.kv_dim, hd) : NONE;
        const float m_new = max(m, group_max(score));
        const float e = score > NONE ? exp(score - m_new) : 0.0;
        weight_s[lane] = e;
        const float run_sum = group_sum(e);
        const float c = exp(m - m_new);  // rescales the sums so far (1 while nothing was seen)
        l = l * c + run_sum;
        m = m_new;
        const uint n = min(WG, k1 - r0);
        if (group < groups)
            [[unroll]] for (uint i = 0; i < DIMS_PER_LANE; ++i) {
                const uint d = d0 + i * dim_lanes;
                if (d < hd) {
                    float acc = 0.0;
                    for (uint j = group; j < n; j += groups) acc += weight_s[j] * vc[kv_off + slot_row(r0 + j) * p.kv_dim + d];
                    o[i] = o[i] * c + acc;
                }
            }
        barrier();  // the next run rewrites weight_s, max_s and sum_s
    }
    if (groups > 1) {  // head_dim <= WG / 2: one sum per dimension over the sets
        if (group < groups) out_s[lane] = o[0];
        memoryBarrierShared();
        barrier();
        if (group == 0)
            for (uint g = 1; g < groups; ++g) o[0] += out_s[g * dim_lanes + d0];
    }
    if (splits == 1) {
        if (group == 0)
            [[unroll]] for (uint i = 0; i < DIMS_PER_LANE; ++i) {
                const uint d = d0 + i * dim_lanes;
                if (d < hd) O[t * p.dim + h * hd + d] = o[i] / l;  // every token sees a key (itself)
            }
        return;  // uniform across the workgroup
    }
    // Several ranges: each writes its sums, maximum and weight, and the last of the pair's
    // workgroups to arrive merges them (no second dispatch and barrier a layer).
    const uint pair_row = (t * p.n_heads + h) * p.ctx, stride = hd + 2, row = pair_row + split * stride;
    if (group == 0)
        [[unroll]] for (uint i = 0; i < DIMS_PER_LANE; ++i) {
            const uint d = d0 + i * dim_lanes;
            if (d < hd) partial[row + d] = o[i];
        }
    if (lane == 0) partial[row + hd] = m, partial[row + hd + 1] = l;
    memoryBarrierBuffer();  // this range's partials before its arrival
    barrier();
    if (lane == 0) last_s = atomicAdd(arrivals[t * p.n_heads + h], 1u) == splits - 1 ? 1u : 0u;
    memoryBarrierShared();
    barrier();
    if (last_s == 0) return;  // uniform across the workgroup
    memoryBarrierBuffer();
    // Each range's sums scaled by exp(its maximum - the largest), over the total weight; a range
    // that saw no key weighs 0.
    float largest = NONE;
    for (uint s = 0; s < splits; ++s) largest = max(largest, partial[pair_row + s * stride + hd]);
    float total = 0.0;
    for (uint s = 0; s < splits; ++s)
        total += partial[pair_row + s * stride + hd + 1] * exp(partial[pair_row + s * stride + hd] - largest);
    for (uint d = lane; d < hd; d += WG) {
        float acc = 0.0;
        for (uint s = 0; s < splits; ++s)
            acc += partial[pair_row + s * stride + d] * exp(partial[pair_row + s * stride + hd] - largest);
        O[t * p.dim + h * hd + d] = acc / total;
    }
    if (lane == 0) arrivals[t * p.n_heads + h] = 0u;  // ready for the next layer and replay
}
