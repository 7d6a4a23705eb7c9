// variants: F32 F16 Q8 Q4
#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_control_flow_attributes : require
// Y[t][o] (+)= sum_i W[o][i] * X[t][i] for a tile of up to 8 tokens (one subgroup or one lane per
// output row, see LANE_PER_ROW), so each weight word is loaded once and used for every token of
// the tile (tree verification).
// Fused options: RMSNorm of X with gain G (the norm before q/k/v, the FFN and the classifier),
// accumulate into Y (residual adds), SwiGLU over rows o and o+out (w1 and w3 stacked), and the
// Medusa ResBlock Y = X + SiLU(W X + b) with the bias in G.
// Row blocks (block_rows < out_dim, one token): rows [b*block_rows, (b+1)*block_rows) read input
// row b and write output row b, so K stacked Medusa heads run as one dispatch.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Weights { uint W[]; };
layout(std430, binding = 1) readonly buffer Scales { float scales[]; };
layout(std430, binding = 2) readonly buffer Input { float X[]; };
layout(std430, binding = 3) buffer Output { float Y[]; };
layout(std430, binding = 4) readonly buffer Gain { float G[]; };
layout(push_constant) uniform Push {
    uint in_dim;
    uint out_dim;   // rows written (for SwiGLU: half the rows of W)
    uint n_tokens;
    uint group_shift;  // log2 of the quantization group size
    uint flags;
    uint x_stride;
    uint y_stride;
    float eps;
    uint block_rows;  // out_dim, or the rows of one stacked matrix (see above)
} p;
#include "weights.glsl"
#define FLAG_NORM 1u
#define FLAG_ACCUM 2u
#define FLAG_SWIGLU 4u
#define FLAG_RESBLOCK 8u
// Tokens per workgroup: 1 for single-token decoding, 8 for prompts and trees (host's choice).
layout(constant_id = 0) const uint TILE = 8;
// Row layout. 0: one subgroup per output row, lanes stride over the row (coalesced weight reads
// for GPUs). 1: one invocation per output row, every lane walking the same input index, so X and
// the norm gain are uniform loads: CPU drivers (lavapipe) turn per-lane X reads into gathers, and
// with a tile of tokens those gathers, not the weights, would cost the most.
layout(constant_id = 1) const uint LANE_PER_ROW = 0;

// `t`: the token, or in row-block mode the block; `r`: the row within it; `row`: the flat row.
float finish(float a, float b, float s, uint row, uint r, uint t) {
    const bool norm = (p.flags & FLAG_NORM) != 0;
    const bool swiglu = (p.flags & FLAG_SWIGLU) != 0;
    const float rms = norm ? inversesqrt(s / float(p.in_dim) + p.eps) : 1.0;
    float v = a * rms;
    if (swiglu) v = v / (1.0 + exp(-v)) * (b * rms);
    if ((p.flags & FLAG_RESBLOCK) != 0) {
        v += G[row];
        v = X[t * p.x_stride + r] + v / (1.0 + exp(-v));
    }
    return v;
}

void store(uint r, uint t, float v) {
    const uint yi = t * p.y_stride + r;
    if ((p.flags & FLAG_ACCUM) != 0) Y[yi] += v; else Y[yi] = v;
}

void lane_per_row() {
    const uint row = gl_GlobalInvocationID.x;
    if (row >= p.out_dim) return;
    const uint blk = row / p.block_rows, r = row - blk * p.block_rows;
    const uint t0 = gl_WorkGroupID.y * TILE + blk;
    const bool norm = (p.flags & FLAG_NORM) != 0;
    const bool swiglu = (p.flags & FLAG_SWIGLU) != 0;
    const uint words_per_row = p.in_dim / EPW;
    const uint row2 = row + p.out_dim;
    const uint tokens = min(TILE, p.n_tokens + blk - t0);
    float acc[8], acc2[8], ss[8];
    [[unroll]] for (uint j = 0; j < TILE; ++j) acc[j] = acc2[j] = ss[j] = 0.0;
    for (uint wi = 0; wi < words_per_row; ++wi) {
        const uint i0 = wi * EPW;
        float w[EPW], w2[EPW];
        decode_word(W[row * words_per_row + wi], row * p.in_dim + i0, p.group_shift, w);
        if (swiglu) decode_word(W[row2 * words_per_row + wi], row2 * p.in_dim + i0, p.group_shift, w2);
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
    [[unroll]] for (uint j = 0; j < TILE; ++j)
        if (j < tokens) store(r, t0 + j, finish(acc[j], acc2[j], ss[j], row, r, t0 + j));
}

void main() {
    if (LANE_PER_ROW != 0) {
        lane_per_row();
        return;
    }
    const uint lane = gl_SubgroupInvocationID;
    const bool norm = (p.flags & FLAG_NORM) != 0;
    const bool swiglu = (p.flags & FLAG_SWIGLU) != 0;
    const uint words_per_row = p.in_dim / EPW;
    const uint row_step = gl_NumWorkGroups.x * gl_NumSubgroups;
    for (uint row = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID; row < p.out_dim; row += row_step) {
        const uint blk = row / p.block_rows, r = row - blk * p.block_rows;
        const uint t0 = gl_WorkGroupID.y * TILE + blk, t_end = p.n_tokens + blk;
        float acc[8], acc2[8], ss[8];
        [[unroll]] for (uint j = 0; j < TILE; ++j) acc[j] = acc2[j] = ss[j] = 0.0;
        const uint row2 = row + p.out_dim;
        for (uint wi = lane; wi < words_per_row; wi += gl_SubgroupSize) {
            const uint i0 = wi * EPW;
            float w[EPW], w2[EPW];
            decode_word(W[row * words_per_row + wi], row * p.in_dim + i0, p.group_shift, w);
            if (swiglu) decode_word(W[row2 * words_per_row + wi], row2 * p.in_dim + i0, p.group_shift, w2);
            [[unroll]] for (uint j = 0; j < TILE; ++j) {
                if (t0 + j >= t_end) continue;
                const uint xb = (t0 + j) * p.x_stride + i0;
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
        [[unroll]] for (uint j = 0; j < TILE; ++j) {
            if (t0 + j >= t_end) continue;
            float a = subgroupAdd(acc[j]);
            float b = swiglu ? subgroupAdd(acc2[j]) : 0.0;
            float s = norm ? subgroupAdd(ss[j]) : 0.0;
            if (subgroupElect()) store(r, t0 + j, finish(a, b, s, row, r, t0 + j));
        }
    }
}
