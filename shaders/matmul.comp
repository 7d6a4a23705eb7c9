// variants: F32 F16 BF16 Q8 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_NL IQ4_XS F32+TEXEL F16+TEXEL BF16+TEXEL Q8+TEXEL Q4_0+TEXEL Q4_1+TEXEL Q5_0+TEXEL Q5_1+TEXEL Q8_0+TEXEL Q2_K+TEXEL Q3_K+TEXEL Q4_K+TEXEL Q5_K+TEXEL Q6_K+TEXEL IQ4_NL+TEXEL IQ4_XS+TEXEL F32+ROPE F16+ROPE BF16+ROPE Q8+ROPE Q4_0+ROPE Q4_1+ROPE Q5_0+ROPE Q5_1+ROPE Q8_0+ROPE Q2_K+ROPE Q3_K+ROPE Q4_K+ROPE Q5_K+ROPE Q6_K+ROPE IQ4_NL+ROPE IQ4_XS+ROPE F32+TEXEL+ROPE F16+TEXEL+ROPE BF16+TEXEL+ROPE Q8+TEXEL+ROPE Q4_0+TEXEL+ROPE Q4_1+TEXEL+ROPE Q5_0+TEXEL+ROPE Q5_1+TEXEL+ROPE Q8_0+TEXEL+ROPE Q2_K+TEXEL+ROPE Q3_K+TEXEL+ROPE Q4_K+TEXEL+ROPE Q5_K+TEXEL+ROPE Q6_K+TEXEL+ROPE IQ4_NL+TEXEL+ROPE IQ4_XS+TEXEL+ROPE
#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require
#include "layouts/push_constants.h"
#include "layouts/block_params.h"
// Y[t][o] (+)= sum_i W[o][i] * X[t][i] for a tile of up to 8 tokens (one subgroup or one lane per
// output row, see LANE_PER_ROW), so each weight word is loaded once and used for every token of
// the tile (tree verification).
// Fused options: RMSNorm of X with gain G (the norm before q/k/v, the FFN and the classifier),
// accumulate into Y (residual adds), SwiGLU (or with FLAG_GELU GeGLU) over rows o and o+out (w1
// and w3 stacked), and the
// Medusa ResBlock Y = X + SiLU(W X + b) with the bias in G, and the qkv matmul's biases, RoPE and
// k/v cache writes (rope_kv.comp's work).
// Row blocks (block_rows < out_dim, one token): rows [b*block_rows, (b+1)*block_rows) read input
// row b and write output row b, so K stacked Medusa heads run as one dispatch.
// Invocations per workgroup: a specialization constant (id 2) the host sets from the tuned or
// default configuration (MatmulConfig).
layout(local_size_x_id = 2) in;
// Weights are bindings 0 and 1 (weights.glsl).
layout(std430, binding = 2) readonly buffer Input { float X[]; };
layout(std430, binding = 3) buffer Output { float Y[]; };
layout(std430, binding = 4) readonly buffer Gain { float G[]; };
// The same buffers read four floats at a time (LANE_PER_ROW on CPU drivers, where every load is
// an instruction per lane: a 16-byte load costs about what a 4-byte one does).
// The TEXEL variants (weights.glsl) read them as texels too, at bindings 9 and 10.
#if defined(VARIANT_TEXEL)
layout(binding = 9) uniform samplerBuffer InputTexels4;
layout(binding = 10) uniform samplerBuffer GainTexels4;
vec4 x4_at(uint i) { return texelFetch(InputTexels4, int(i)); }
vec4 g4_at(uint i) { return texelFetch(GainTexels4, int(i)); }
#define ROPE_KEYS 11
#define ROPE_VALUES 12
#define ROPE_PARAMS 13
#define ROPE_BIAS 14
#define ROPE_FACTORS 15
#else
layout(std430, binding = 2) readonly buffer Input4 { vec4 X4[]; };
layout(std430, binding = 4) readonly buffer Gain4 { vec4 G4[]; };
vec4 x4_at(uint i) { return X4[i]; }
vec4 g4_at(uint i) { return G4[i]; }
#define ROPE_KEYS 5
#define ROPE_VALUES 6
#define ROPE_PARAMS 7
#define ROPE_BIAS 8
#define ROPE_FACTORS 9
#endif
#if defined(VARIANT_ROPE)
// The qkv matmul's RoPE and cache writes (FLAG_ROPE, rope_kv.comp's bindings): the layer's cache,
// the block's positions and slots, the q/k/v biases and Llama 3's frequency factors; after the
// texel views, or after the five storage buffers. A variant of its own, so that the other
// matmuls do not bind a cache they might write (the barriers and the validation layer's
// synchronization checks go by what a shader may write).
layout(std430, binding = ROPE_KEYS) writeonly buffer KCache { float kc[]; };
layout(std430, binding = ROPE_VALUES) writeonly buffer VCache { float vc[]; };
layout(std430, binding = ROPE_PARAMS) readonly buffer Params { BlockParams P; };
layout(std430, binding = ROPE_BIAS) readonly buffer QkvBias { float qkv_bias[]; };
layout(std430, binding = ROPE_FACTORS) readonly buffer RopeFactors { float rope_factors[]; };
#endif
layout(push_constant) uniform PushBlock { MatmulPush p; };
#include "weights.glsl"
#include "rope.glsl"
#include "ffn_gate.glsl"
#define FLAG_NORM 1u
#define FLAG_ACCUM 2u
#define FLAG_SWIGLU 4u
#define FLAG_RESBLOCK 8u
#define FLAG_ROPE 16u
#define FLAG_GELU 32u  // with FLAG_SWIGLU: the gate's activation is GELU (tanh), not SiLU
// The fusions (FLAG_* above, kMatmul* on the host) are a specialization constant, not a push
// constant: CPU drivers run both sides of a branch under a lane mask, so a runtime flag made every
// matmul decode and multiply the SwiGLU's second matrix too (twice the work for the plain ones).
layout(constant_id = 4) const uint FUSIONS = 0;
// Tokens per workgroup: 1 for single-token decoding, 8 for prompts and trees (host's choice).
layout(constant_id = 0) const uint TILE = 8;
// Row layout. 0: one subgroup per output row, lanes stride over the row (coalesced weight reads
// for GPUs). 1: one invocation per output row, all lanes walking the same inputs (CPU drivers such
// as lavapipe, where every load is an instruction per lane: with a tile of tokens the inputs, not
// the weights, would cost the most, so each is loaded once per subgroup and shuffled).
layout(constant_id = 1) const uint LANE_PER_ROW = 0;
// The subgroup size (gl_SubgroupSize as a constant), so the lane-per-row loop over a chunk of
// quads unrolls and each shuffle reads a constant lane: lavapipe then broadcasts one float from
// memory instead of permuting a register with a lane index (1.6x the decode speed).
layout(constant_id = 3) const uint SUBGROUP = 8;

// `t`: the token, or in row-block mode the block; `r`: the row within it; `row`: the flat row.
float finish(float a, float b, float s, uint row, uint r, uint t) {
    const bool norm = (FUSIONS & FLAG_NORM) != 0;
    const bool swiglu = (FUSIONS & FLAG_SWIGLU) != 0;
    const float rms = norm ? inversesqrt(s / float(p.in_dim) + p.eps) : 1.0;
    float v = a * rms;
    if (swiglu) v = gate_activation(v, (FUSIONS & FLAG_GELU) != 0) * (b * rms);
    if ((FUSIONS & FLAG_RESBLOCK) != 0) {
        v += G[row];
        v = X[t * p.x_stride + r] + v / (1.0 + exp(-v));
    }
    return v;
}

void store(uint r, uint t, float v) {
    const uint yi = t * p.y_stride + p.row_offset + r;
    if ((FUSIONS & FLAG_ACCUM) != 0) Y[yi] += v; else Y[yi] = v;
}

#if defined(VARIANT_ROPE)
// FLAG_ROPE: what rope_kv.comp does after the qkv matmul, one dispatch a layer fewer. `v` is row
// g of q|k|v for token t and `partner` its RoPE partner's (rows 2i and 2i+1), biases added.
void rope_write(uint g, uint t, float v, float partner) {
    const uint qd = p.rope_q_dim, kvd = p.rope_kv_dim, hd = p.rope_head_dim;
    const uint cache_row = p.rope_cache_offset + ((P.base + t) % p.rope_cache_rows) * kvd;
    if (g < qd + kvd) {
        const bool is_q = g < qd;
        const uint i = is_q ? g : g - qd, d = i % hd;
        float rotated = v;
        if (d < p.rope_rotated) {
            const float pos = float(P.positions[t]) / p.rope_position_scale;
            const vec2 cs = rope_cos_sin(d & ~1u, p.rope_rotated, p.rope_theta, rope_factors[d / 2], pos, p.rope_attn_factor);
            // (v0, v1) -> (v0 c - v1 s, v0 s + v1 c), this lane holding v0 or v1.
            rotated = (i & 1u) == 0u ? v * cs.x - partner * cs.y : partner * cs.y + v * cs.x;
        }
        if (is_q) Y[t * p.y_stride + g] = rotated;
        else kc[cache_row + i] = rotated;
    } else {
        vc[cache_row + g - qd - kvd] = v;
    }
}

// The lane-per-row layout's: the partner is the neighbouring lane, so every lane calls this (the
// shuffle) and `keep` says who stores.
void rope_store(uint r, uint t, float v, bool keep) {
    const uint g = p.row_offset + r;
    v += qkv_bias[g];
    const float partner = subgroupShuffleXor(v, 1u);
    if (keep) rope_write(g, t, v, partner);
}
#endif

// Words of a quad in the first half (weight_quad's first (a, b)).
#define HALF (EPW > 1 ? EPW / 2 : 1)

void lane_per_row() {
    // Lanes past the last row compute a copy of it (the subgroup permutes below need every lane)
    // and store nothing.
    const bool live = gl_GlobalInvocationID.x < p.out_dim;
    const uint row = min(gl_GlobalInvocationID.x, p.out_dim - 1);
    const uint blk = row / p.block_rows, r = row - blk * p.block_rows;
    const uint t0 = gl_WorkGroupID.y * TILE + blk;
    const bool norm = (FUSIONS & FLAG_NORM) != 0;
    const bool swiglu = (FUSIONS & FLAG_SWIGLU) != 0;
    const uint words_per_row = p.in_dim / EPW;
    const uint row2 = row + p.out_dim;
    const uint tokens = min(TILE, p.n_tokens + blk - t0);
    float acc[8], acc2[8], ss[8];
    [[unroll]] for (uint j = 0; j < TILE; ++j) acc[j] = acc2[j] = ss[j] = 0.0;
    // Four words (4*EPW inputs) at a time where rows and input rows are 16-byte aligned.
    const bool quads = words_per_row % 4u == 0u && p.x_stride % 4u == 0u;
    const uint n_quads = words_per_row / 4u, lane = gl_SubgroupInvocationID;
    for (uint c0 = 0; quads && c0 < n_quads; c0 += SUBGROUP) {
        // Every lane needs the same inputs: each lane loads those of one quad of this chunk, and
        // the quad loop, unrolled, takes them from that lane (a shuffle from a constant lane
        // instead of a load per lane).
        // The loading lane also applies the norm's gains, adds its quad to the sum of squares
        // (summed over the lanes at the end) and sums each half quad for the weights' offsets, so
        // none of that is done per weight.
        const uint mine = min(c0 + lane, n_quads - 1);
        const bool counted = c0 + lane < n_quads;
        vec4 xs[8 * EPW], gains[EPW];
        vec2 halves[8];
        // The gains once per chunk, not per token (a CPU driver cannot merge the repeated fetches).
        if (norm) [[unroll]] for (uint q = 0; q < EPW; ++q) gains[q] = g4_at(mine * EPW + q);
        [[unroll]] for (uint j = 0; j < TILE; ++j) {
            vec2 h = vec2(0.0);
            [[unroll]] for (uint q = 0; q < EPW; ++q) {
                vec4 x = x4_at(((t0 + min(j, tokens - 1)) * p.x_stride) / 4u + mine * EPW + q);
                if (norm) {
                    ss[j] += counted ? dot(x, x) : 0.0;
                    x *= gains[q];
                }
                if (q < HALF) h.x += dot(x, vec4(1.0)); else h.y += dot(x, vec4(1.0));
                xs[j * EPW + q] = x;
            }
            halves[j] = h;
        }
        [[unroll]] for (uint k = 0; k < SUBGROUP; ++k) if (c0 + k < n_quads) {  // (last chunk: part)
            const uint wq = c0 + k;
            vec4 w[EPW], w2[EPW], ab, ab2;
            weight_quad(row, wq, p.in_dim, p.group_shift, 0u, w, ab);
            if (swiglu) weight_quad(row2, wq, p.in_dim, p.group_shift, 1u, w2, ab2);
            [[unroll]] for (uint j = 0; j < TILE; ++j) {
                const vec2 h = subgroupShuffle(halves[j], k);
                vec2 d = vec2(0.0), e = vec2(0.0);  // the halves' dot products with the codes
                [[unroll]] for (uint q = 0; q < EPW; ++q) {
                    const vec4 x = subgroupShuffle(xs[j * EPW + q], k);
                    if (q < HALF) d.x += dot(w[q], x); else d.y += dot(w[q], x);
                    if (swiglu) {
                        if (q < HALF) e.x += dot(w2[q], x); else e.y += dot(w2[q], x);
                    }
                }
                acc[j] += dot(ab.xz, d) + dot(ab.yw, h);
                if (swiglu) acc2[j] += dot(ab2.xz, e) + dot(ab2.yw, h);
            }
        }
    }
    if (quads && norm) [[unroll]] for (uint j = 0; j < TILE; ++j) ss[j] = subgroupAdd(ss[j]);
    for (uint wi = 0; !quads && wi < words_per_row; ++wi) {
        const uint i0 = wi * EPW;
        float w[EPW], w2[EPW];
        weight_word(row, wi, p.in_dim, p.group_shift, w);
        if (swiglu) weight_word(row2, wi, p.in_dim, p.group_shift, w2);
        [[unroll]] for (uint j = 0; j < TILE; ++j) {
            // Tokens past the block re-read the last one (uniform, in bounds); never stored.
            const uint xb = (t0 + min(j, tokens - 1)) * p.x_stride + i0;
            [[unroll]] for (uint k = 0; k < EPW; ++k) {
                float x = X[xb + k];
                if (norm) {
                    ss[j] += x * x;
                    x *= G[i0 + k];
                }
                acc[j] += w[k] * x;
                if (swiglu) acc2[j] += w2[k] * x;
            }
        }
    }
#if defined(VARIANT_ROPE)
    [[unroll]] for (uint j = 0; j < TILE; ++j)
        rope_store(r, t0 + j, finish(acc[j], acc2[j], ss[j], row, r, t0 + j), live && j < tokens);
    return;
#endif
    [[unroll]] for (uint j = 0; j < TILE; ++j)
        if (live && j < tokens) store(r, t0 + j, finish(acc[j], acc2[j], ss[j], row, r, t0 + j));
}

// Inputs [i0, i0 + EPW) of token row t, four at a time where the row stride allows (a GPU serves
// a 16-byte load per lane for about the cost of a 4-byte one).
void load_inputs(uint t, uint i0, bool fours, out float x[EPW]) {
    const uint base = t * p.x_stride + i0;
#if EPW >= 4
    if (fours) {
        [[unroll]] for (uint q = 0; q < EPW / 4; ++q) {
            const vec4 v = x4_at(base / 4u + q);
            [[unroll]] for (uint k = 0; k < 4u; ++k) x[4u * q + k] = v[k];
        }
        return;
    }
#endif
    [[unroll]] for (uint k = 0; k < EPW; ++k) x[k] = X[base + k];
}

void load_gains(uint i0, out float g[EPW]) {
#if EPW >= 4
    [[unroll]] for (uint q = 0; q < EPW / 4; ++q) {
        const vec4 v = g4_at(i0 / 4u + q);
        [[unroll]] for (uint k = 0; k < 4u; ++k) g[4u * q + k] = v[k];
    }
#else
    [[unroll]] for (uint k = 0; k < EPW; ++k) g[k] = G[i0 + k];
#endif
}

// Output rows per subgroup in the subgroup layout (the host's choice, 1 to MAX_ROWS): each input
// load, norm and input sum serves them all, and their weight loads are in flight together. A
// GPU's matmul is bound by loads (weights from memory, inputs from cache), not by arithmetic.
layout(constant_id = 5) const uint ROWS = 1;
#define MAX_ROWS 4
// What a lane reads a step in the subgroup layout. 1: a quad of words (a whole q4_0 block's codes in
// one 16-byte load, two for q8_0), so that a subgroup has 4x the bytes in flight per round trip to
// memory and walks a row in a quarter of the steps; the inputs as EPW vec4s. 0: one word.
layout(constant_id = 6) const uint QUADS = 0;

// One step of the quad walk: quad q of each of the group's rows against the block's tokens.
void rows_quad_step(uint q, const uint rows[MAX_ROWS], uint t0, uint tokens, inout float acc[MAX_ROWS * 8],
                    inout float acc2[MAX_ROWS * 8], inout float ss[8]) {
    const bool norm = (FUSIONS & FLAG_NORM) != 0;
    const bool swiglu = (FUSIONS & FLAG_SWIGLU) != 0;
    // Every row's codes first, so that their loads are issued together.
    vec4 w[MAX_ROWS * EPW], w2[MAX_ROWS * EPW], ab[MAX_ROWS], ab2[MAX_ROWS], gains[EPW];
    [[unroll]] for (uint r = 0; r < ROWS; ++r) {
        vec4 c[EPW];
        weight_quad(rows[r], q, p.in_dim, p.group_shift, 0u, c, ab[r]);
        [[unroll]] for (uint k = 0; k < EPW; ++k) w[r * EPW + k] = c[k];
        if (swiglu) {
            weight_quad(rows[r] + p.out_dim, q, p.in_dim, p.group_shift, 1u, c, ab2[r]);
            [[unroll]] for (uint k = 0; k < EPW; ++k) w2[r * EPW + k] = c[k];
        }
    }
    if (norm) [[unroll]] for (uint k = 0; k < EPW; ++k) gains[k] = g4_at(q * EPW + k);
    [[unroll]] for (uint j = 0; j < TILE; ++j) {
        if (j >= tokens) break;  // (uniform)
        vec4 x[EPW];
        vec2 h = vec2(0.0);  // the sums of the quad's halves, for the b of a * code + b
        [[unroll]] for (uint k = 0; k < EPW; ++k) {
            x[k] = x4_at(((t0 + j) * p.x_stride) / 4u + q * EPW + k);
            if (norm) {
                ss[j] += dot(x[k], x[k]);
                x[k] *= gains[k];
            }
            if (k < HALF) h.x += dot(x[k], vec4(1.0)); else h.y += dot(x[k], vec4(1.0));
        }
        [[unroll]] for (uint r = 0; r < ROWS; ++r) {
            vec2 d = vec2(0.0), e = vec2(0.0);  // the halves' dot products with the codes
            [[unroll]] for (uint k = 0; k < EPW; ++k) {
                if (k < HALF) d.x += dot(w[r * EPW + k], x[k]); else d.y += dot(w[r * EPW + k], x[k]);
                if (swiglu) {
                    if (k < HALF) e.x += dot(w2[r * EPW + k], x[k]); else e.y += dot(w2[r * EPW + k], x[k]);
                }
            }
            acc[r * TILE + j] += dot(ab[r].xz, d) + dot(ab[r].yw, h);
            if (swiglu) acc2[r * TILE + j] += dot(ab2[r].xz, e) + dot(ab2[r].yw, h);
        }
    }
}

void subgroup_rows() {
    const uint lane = gl_SubgroupInvocationID;
    const bool norm = (FUSIONS & FLAG_NORM) != 0;
    const bool swiglu = (FUSIONS & FLAG_SWIGLU) != 0;
    const uint words_per_row = p.in_dim / EPW;
    const bool fours = EPW % 4u == 0u && p.x_stride % 4u == 0u;
    const uint n_groups = (p.out_dim + ROWS - 1u) / ROWS;
    const uint group_step = gl_NumWorkGroups.x * gl_NumSubgroups;
    for (uint g = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID; g < n_groups; g += group_step) {
        const uint row0 = g * ROWS;
        // Row blocks: the host gives ROWS = 1 unless ROWS divides block_rows, so a group's rows
        // share one block (one input row).
        const uint blk = row0 / p.block_rows;
        const uint t0 = gl_WorkGroupID.y * TILE + blk;
        const uint tokens = min(TILE, p.n_tokens + blk - t0);
        // Rows past the last one compute a copy of it and store nothing.
        uint rows[MAX_ROWS];
        [[unroll]] for (uint r = 0; r < ROWS; ++r) rows[r] = min(row0 + r, p.out_dim - 1u);
        float acc[MAX_ROWS * 8], acc2[MAX_ROWS * 8], ss[8];
        [[unroll]] for (uint i = 0; i < ROWS * TILE; ++i) acc[i] = acc2[i] = 0.0;
        [[unroll]] for (uint j = 0; j < TILE; ++j) ss[j] = 0.0;
        // Quads where rows and input rows are 16-byte aligned.
        const bool by_quads = QUADS != 0 && words_per_row % 4u == 0u && p.x_stride % 4u == 0u;
        for (uint q = lane; by_quads && q < words_per_row / 4u; q += gl_SubgroupSize)
            rows_quad_step(q, rows, t0, tokens, acc, acc2, ss);
        for (uint wi = lane; !by_quads && wi < words_per_row; wi += gl_SubgroupSize) {
            const uint i0 = wi * EPW;
            // Every row's codes first, so that their loads are issued together.
            float codes[MAX_ROWS * EPW], codes2[MAX_ROWS * EPW], gains[EPW];
            vec2 ab[MAX_ROWS], ab2[MAX_ROWS];
            [[unroll]] for (uint r = 0; r < ROWS; ++r) {
                float c[EPW];
                weight_codes(rows[r], wi, p.in_dim, p.group_shift, c, ab[r]);
                [[unroll]] for (uint k = 0; k < EPW; ++k) codes[r * EPW + k] = c[k];
                if (swiglu) {
                    weight_codes(rows[r] + p.out_dim, wi, p.in_dim, p.group_shift, c, ab2[r]);
                    [[unroll]] for (uint k = 0; k < EPW; ++k) codes2[r * EPW + k] = c[k];
                }
            }
            if (norm) load_gains(i0, gains);
            [[unroll]] for (uint j = 0; j < TILE; ++j) {
                if (j >= tokens) break;  // (uniform)
                float x[EPW];
                load_inputs(t0 + j, i0, fours, x);
                float sum = 0.0;  // for the b of a * code + b
                [[unroll]] for (uint k = 0; k < EPW; ++k) {
                    if (norm) {
                        ss[j] += x[k] * x[k];
                        x[k] *= gains[k];
                    }
                    sum += x[k];
                }
                [[unroll]] for (uint r = 0; r < ROWS; ++r) {
                    float d = 0.0, e = 0.0;
                    [[unroll]] for (uint k = 0; k < EPW; ++k) {
                        d += codes[r * EPW + k] * x[k];
                        if (swiglu) e += codes2[r * EPW + k] * x[k];
                    }
                    acc[r * TILE + j] += ab[r].x * d + ab[r].y * sum;
                    if (swiglu) acc2[r * TILE + j] += ab2[r].x * e + ab2[r].y * sum;
                }
            }
        }
        [[unroll]] for (uint j = 0; j < TILE; ++j) {
            if (j >= tokens) break;
            const float s = norm ? subgroupAdd(ss[j]) : 0.0;
#if defined(VARIANT_ROPE)
            {
                // The host gives an even ROWS, so each row's RoPE partner is in the group.
                float v[MAX_ROWS];
                [[unroll]] for (uint r = 0; r < ROWS; ++r)  // (no row blocks: a row is its own index)
                    v[r] = finish(subgroupAdd(acc[r * TILE + j]), 0.0, s, rows[r], rows[r], t0 + j) +
                           qkv_bias[p.row_offset + rows[r]];
                [[unroll]] for (uint r = 0; r < ROWS; ++r)
                    if (subgroupElect() && row0 + r < p.out_dim)
                        rope_write(p.row_offset + rows[r], t0 + j, v[r], v[r ^ 1u]);
                continue;
            }
#endif
            [[unroll]] for (uint r = 0; r < ROWS; ++r) {
                const float a = subgroupAdd(acc[r * TILE + j]);
                const float b = swiglu ? subgroupAdd(acc2[r * TILE + j]) : 0.0;
                const uint rr = rows[r] - blk * p.block_rows;
                if (subgroupElect() && row0 + r < p.out_dim) store(rr, t0 + j, finish(a, b, s, rows[r], rr, t0 + j));
            }
        }
    }
}

void main() {
    if (LANE_PER_ROW != 0) lane_per_row();
    else subgroup_rows();
}
