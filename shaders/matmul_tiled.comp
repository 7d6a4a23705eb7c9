// variants: F32 F16 BF16 Q8 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_NL IQ4_XS
#version 450
#extension GL_EXT_control_flow_attributes : require
#include "layouts/push_constants.h"
// Y[t][o] (+)= sum_i W[o][i] * X[t][i] for blocks of many tokens (prompts, verified trees): a
// workgroup computes a tile of BM rows by BN tokens, walking the inputs in chunks of BK. Each
// chunk of BM weight rows is dequantized once into shared memory and serves all BN tokens; the
// chunk of BN input rows likewise serves all BM rows. matmul.comp, which keeps its weights in
// registers, rereads every weight once per 8 tokens.
// Each invocation computes TM rows by TN tokens of the tile (rows tr + i * BM / TM, tokens
// tc + j * BN / TN), so a shared load serves TN (or TM) multiply-adds.
// Fused options (matmul.comp's, those the forward uses on blocks): RMSNorm of X with gain G, whose
// gains are applied to the weights as they are dequantized and whose sums of squares are taken in
// a prologue; accumulate into Y; SwiGLU over rows o and o + out (w1 and w3 stacked), the tile's
// first BM / 2 rows being w1's and the next BM / 2 the same rows of w3, so that each invocation
// holds both halves of its outputs.
// Only storage buffers and barriers: any Vulkan 1.2 device runs it.
layout(local_size_x_id = 2) in;  // (BM / TM) * (BN / TN), set by the host
// Weights are bindings 0 and 1 (weights.glsl).
layout(std430, binding = 2) readonly buffer Input { float X[]; };
layout(std430, binding = 2) readonly buffer Input4 { vec4 X4[]; };
layout(std430, binding = 3) buffer Output { float Y[]; };
layout(std430, binding = 4) readonly buffer Gain { float G[]; };
layout(std430, binding = 4) readonly buffer Gain4 { vec4 G4[]; };
layout(push_constant) uniform PushBlock { MatmulPush p; };
#include "weights.glsl"
#include "ffn_gate.glsl"
#define FLAG_NORM 1u
#define FLAG_ACCUM 2u
#define FLAG_SWIGLU 4u
#define FLAG_GELU 32u  // with FLAG_SWIGLU: GeGLU
layout(constant_id = 0) const uint BM = 64;  // rows of W per tile
layout(constant_id = 1) const uint BN = 32;  // tokens per tile
layout(constant_id = 3) const uint TM = 4;   // rows per invocation (even: SwiGLU's halves)
layout(constant_id = 4) const uint TN = 4;   // tokens per invocation
layout(constant_id = 5) const uint FUSIONS = 0;  // FLAG_* (a specialization constant, as matmul.comp says why)
#define BK 32  // inputs per chunk: a whole number of quads (4 words) of every variant
// vec4s per shared row: a chunk and one of padding, so that the rows a subgroup reads at once
// start in different banks.
#define LD (BK / 4 + 1)
shared vec4 Ws[BM * LD];
shared vec4 Xs[BN * LD];
shared float token_ss[BN];

const bool norm = (FUSIONS & FLAG_NORM) != 0;
const bool swiglu = (FUSIONS & FLAG_SWIGLU) != 0;
#define INVOCATIONS (gl_WorkGroupSize.x)
#define NR (BM / TM)  // invocations along the rows
#define NC (BN / TN)  // invocations along the tokens

void put_weights4(uint rho, uint quad, vec4 x) { Ws[rho * LD + quad] = x; }
void put_weight(uint rho, uint e, float v) { Ws[rho * LD + e / 4u][e % 4u] = v; }
void put_inputs4(uint j, uint quad, vec4 x) { Xs[j * LD + quad] = x; }
void put_partial(uint i, float s) { Ws[i / 4u][i % 4u] = s; }  // the weights' tile, not yet in use
float partial(uint i) { return Ws[i / 4u][i % 4u]; }
#include "matmul_tile_loads.glsl"

void main() {
    const uint tr = gl_LocalInvocationID.x % NR, tc = gl_LocalInvocationID.x / NR;
    const uint o0 = gl_WorkGroupID.x * (swiglu ? BM / 2u : BM), t0 = gl_WorkGroupID.y * BN;
    const bool fours = p.in_dim % 4u == 0u && p.x_stride % 4u == 0u;
    float acc[TM * TN];
    [[unroll]] for (uint i = 0; i < TM * TN; ++i) acc[i] = 0.0;
    for (uint k0 = 0; k0 < p.in_dim; k0 += BK) {
        load_weights(o0, k0);
        load_inputs(t0, k0, fours);
        barrier();
        // (Not unrolled by force: a CPU driver then takes seconds to build the larger tiles.)
        for (uint kq = 0; kq < BK / 4u; ++kq) {
            vec4 a[TM], b[TN];
            [[unroll]] for (uint i = 0; i < TM; ++i) a[i] = Ws[(tr + i * NR) * LD + kq];
            [[unroll]] for (uint j = 0; j < TN; ++j) b[j] = Xs[(tc + j * NC) * LD + kq];
            [[unroll]] for (uint i = 0; i < TM; ++i)
                [[unroll]] for (uint j = 0; j < TN; ++j) acc[i * TN + j] += dot(a[i], b[j]);
        }
        barrier();
    }
    if (norm) sums_of_squares();
    // SwiGLU: rows i < TM / 2 are w1's, row i + TM / 2 the same output's w3 row.
    const uint out_rows = swiglu ? TM / 2u : TM;
    [[unroll]] for (uint j = 0; j < TN; ++j) {
        const uint t = t0 + tc + j * NC;
        if (t >= p.n_tokens) continue;
        const float rms = norm ? inversesqrt(token_ss[tc + j * NC] / float(p.in_dim) + p.eps) : 1.0;
        [[unroll]] for (uint i = 0; i < out_rows; ++i) {
            const uint o = o0 + tr + i * NR;
            if (o >= p.out_dim) continue;
            float v = acc[i * TN + j] * rms;
            if (swiglu) v = gate_activation(v, (FUSIONS & FLAG_GELU) != 0) * (acc[(i + out_rows) * TN + j] * rms);
            const uint yi = t * p.y_stride + p.row_offset + o;
            if ((FUSIONS & FLAG_ACCUM) != 0) Y[yi] += v; else Y[yi] = v;
        }
    }
}
