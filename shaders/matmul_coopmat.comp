// variants: F32 F16 BF16 Q8 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_NL IQ4_XS F32+EMULATED F16+EMULATED BF16+EMULATED Q8+EMULATED Q4_0+EMULATED Q4_1+EMULATED Q5_0+EMULATED Q5_1+EMULATED Q8_0+EMULATED Q2_K+EMULATED Q3_K+EMULATED Q4_K+EMULATED Q5_K+EMULATED Q6_K+EMULATED IQ4_NL+EMULATED IQ4_XS+EMULATED
#version 450
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#ifndef VARIANT_EMULATED
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_NV_cooperative_matrix : require
#endif
#include "layouts/push_constants.h"
// matmul_tiled.comp's product on the device's matrix units (VK_NV_cooperative_matrix): the same
// tiles, fusions and loads (matmul_tile_loads.glsl), the chunks kept in shared memory as f16, and
// each of the workgroup's 4 subgroups of 32 multiplying a 32 x 32 quarter of the 64 x 64 tile as
// 2 x 2 matrices of 16 x 16, accumulated in f32. The tile's sums go through shared memory to the
// same epilogue as matmul_tiled.comp's (the norm's scale, SwiGLU, accumulate).
// Offered only where the device multiplies 16 x 16 x 16 f16 matrices into f32 on subgroups of 32
// (gpu/cooperative_matrix.h), which is what these constants assume.
// The EMULATED variants do the same on any device with f16 arithmetic (the tests run them on CPU
// drivers): the matrix operations are written out as the extension defines them, on 4 groups of
// 32 invocations.
layout(local_size_x = 128) in;
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
layout(constant_id = 5) const uint FUSIONS = 0;  // FLAG_* (the tiled kernel's constant id)
const uint BM = 64;  // rows of W per tile (MatmulTile's cooperative shape)
const uint BN = 64;  // tokens per tile
#define BK 32        // inputs per chunk, as matmul_tiled.comp's
#define INVOCATIONS 128u
#define FRAG 16u     // a matrix unit's M = N = K
// f16 elements per shared row: a chunk and 8 of padding, which keeps each fragment's rows 16-byte
// aligned and spreads them over the banks.
#define LDH (BK + 8)
#define LDC (BN + 4)  // floats per row of the tile's sums
shared float16_t Ws[BM * LDH];
shared float16_t Xs[BN * LDH];
shared float Cs[BM * LDC];
shared float token_ss[BN];

const bool norm = (FUSIONS & FLAG_NORM) != 0;
const bool swiglu = (FUSIONS & FLAG_SWIGLU) != 0;

void put_weights4(uint rho, uint quad, vec4 x) {
    [[unroll]] for (uint c = 0; c < 4u; ++c) Ws[rho * LDH + 4u * quad + c] = float16_t(x[c]);
}
void put_weight(uint rho, uint e, float v) { Ws[rho * LDH + e] = float16_t(v); }
void put_inputs4(uint j, uint quad, vec4 x) {
    [[unroll]] for (uint c = 0; c < 4u; ++c) Xs[j * LDH + 4u * quad + c] = float16_t(x[c]);
}
void put_partial(uint i, float s) { Cs[i] = s; }  // the sums' tile, not yet in use
float partial(uint i) { return Cs[i]; }
#include "matmul_tile_loads.glsl"

#ifdef VARIANT_EMULATED
// A 16 x 16 matrix on a group of 32 invocations: an accumulator is in registers, lane l holding
// elements 8 l .. 8 l + 7 in row-major order; an A or B operand is one of the group's four slots
// of scratch in Cs (which holds nothing while the chunks are multiplied), so that the products
// read them without a barrier each (a CPU driver builds every barrier into a coroutine). Loads
// and stores take an element offset and a stride in elements, rows being columns where colMajor,
// as coopMatLoadNV and coopMatStoreNV do.
struct Frag { float v[8]; };
#define CMat Frag
#define DECLARE_OPERANDS const uint a[2] = uint[2](0u, 1u), b[2] = uint[2](2u, 3u);
uint lane() { return gl_LocalInvocationID.x % 32u; }
uint slot(uint s) { return ((gl_LocalInvocationID.x / 32u) * 4u + s) * 256u; }
uint at(uint e, uint offset, uint stride, bool col_major) {
    const uint r = e / FRAG, c = e % FRAG;
    return offset + (col_major ? c * stride + r : r * stride + c);
}
Frag frag_zero() { Frag f; [[unroll]] for (uint i = 0; i < 8u; ++i) f.v[i] = 0.0; return f; }
#define FRAG_LOAD(s, buf, offset, stride, col_major) \
    for (uint i_ = 0; i_ < 8u; ++i_) Cs[slot(s) + lane() * 8u + i_] = float(buf[at(lane() * 8u + i_, offset, stride, col_major)])
#define OPERANDS_LOADED barrier()
#define PRODUCTS_DONE barrier()
#define FRAG_STORE(f, buf, offset, stride) \
    for (uint i_ = 0; i_ < 8u; ++i_) buf[at(lane() * 8u + i_, offset, stride, false)] = f.v[i_]
// D = A B + C, A and B in slots.
Frag frag_mul_add(uint sa, uint sb, Frag c) {
    Frag d;
    for (uint i = 0; i < 8u; ++i) {
        const uint e = lane() * 8u + i, r = e / FRAG, col = e % FRAG;
        float sum = c.v[i];
        for (uint k = 0; k < FRAG; ++k) sum += Cs[slot(sa) + r * FRAG + k] * Cs[slot(sb) + k * FRAG + col];
        d.v[i] = sum;
    }
    return d;
}
#define SUBGROUP (gl_LocalInvocationID.x / 32u)
#define UNROLL  // (unrolled, the barriers' coroutines take a CPU driver seconds to build)
#else
#define CMat fcoopmatNV<32, gl_ScopeSubgroup, FRAG, FRAG>
#define DECLARE_OPERANDS fcoopmatNV<16, gl_ScopeSubgroup, FRAG, FRAG> a[2], b[2];
#define OPERANDS_LOADED
#define PRODUCTS_DONE
#define frag_zero() CMat(0.0)
#define FRAG_LOAD(f, buf, offset, stride, col_major) coopMatLoadNV(f, buf, offset, stride, col_major)
#define FRAG_STORE(f, buf, offset, stride) coopMatStoreNV(f, buf, offset, stride, false)
#define frag_mul_add(a, b, c) coopMatMulAddNV(a, b, c)
#define SUBGROUP gl_SubgroupID
#define UNROLL [[unroll]]
#endif

void main() {
    const uint o0 = gl_WorkGroupID.x * (swiglu ? BM / 2u : BM), t0 = gl_WorkGroupID.y * BN;
    const bool fours = p.in_dim % 4u == 0u && p.x_stride % 4u == 0u;
    // This subgroup's quarter of the tile: rows m0 .. m0 + 31 by tokens n0 .. n0 + 31.
    const uint m0 = (SUBGROUP % 2u) * 32u, n0 = (SUBGROUP / 2u) * 32u;
    CMat acc[4];
    UNROLL for (uint f = 0; f < 4u; ++f) acc[f] = frag_zero();
    for (uint k0 = 0; k0 < p.in_dim; k0 += BK) {
        load_weights(o0, k0);
        load_inputs(t0, k0, fours);
        barrier();
        UNROLL for (uint kk = 0; kk < BK; kk += FRAG) {
            DECLARE_OPERANDS
            // W's rows are row-major; the inputs, one token a row, are the product's columns.
            UNROLL for (uint i = 0; i < 2u; ++i) { FRAG_LOAD(a[i], Ws, (m0 + i * FRAG) * LDH + kk, LDH, false); }
            UNROLL for (uint j = 0; j < 2u; ++j) { FRAG_LOAD(b[j], Xs, (n0 + j * FRAG) * LDH + kk, LDH, true); }
            OPERANDS_LOADED;
            UNROLL for (uint i = 0; i < 2u; ++i)
                UNROLL for (uint j = 0; j < 2u; ++j) acc[i * 2u + j] = frag_mul_add(a[i], b[j], acc[i * 2u + j]);
            PRODUCTS_DONE;
        }
        barrier();
    }
    if (norm) sums_of_squares();
    UNROLL for (uint i = 0; i < 2u; ++i)
        UNROLL for (uint j = 0; j < 2u; ++j) { FRAG_STORE(acc[i * 2u + j], Cs, (m0 + i * FRAG) * LDC + n0 + j * FRAG, LDC); }
    barrier();
    // SwiGLU: tile rows r < BM / 2 are w1's, row r + BM / 2 the same output's w3 row. Consecutive
    // invocations write consecutive rows of one token.
    const uint out_rows = swiglu ? BM / 2u : BM;
    for (uint i = gl_LocalInvocationID.x; i < out_rows * BN; i += INVOCATIONS) {
        const uint r = i % out_rows, j = i / out_rows, o = o0 + r, t = t0 + j;
        if (o >= p.out_dim || t >= p.n_tokens) continue;
        const float rms = norm ? inversesqrt(token_ss[j] / float(p.in_dim) + p.eps) : 1.0;
        float v = Cs[r * LDC + j] * rms;
        if (swiglu) v = gate_activation(v, (FUSIONS & FLAG_GELU) != 0) * (Cs[(r + out_rows) * LDC + j] * rms);
        const uint yi = t * p.y_stride + p.row_offset + o;
        if ((FUSIONS & FLAG_ACCUM) != 0) Y[yi] += v; else Y[yi] = v;
    }
}
