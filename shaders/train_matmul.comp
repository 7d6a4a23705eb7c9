// variants: TILED DIRECT QUAD
#version 450
#include "layouts/push_constants.h"
// Head training GEMM: C(m,n) (+)= sum_k A(m,k) B(k,n), every operand addressed by element offset
// and row/column strides, so one kernel covers X W^T (forward), dY W (input gradient) and
// dY^T X (weight gradient) without transposed copies. 64x64 outputs per workgroup, 4x4 per thread.
// TILED stages operands in shared memory (GPUs); DIRECT reads them straight from memory with no
// barriers, which CPU drivers (lavapipe) run several times faster. QUAD (CPU drivers, where each
// lane's load is an instruction) gives a thread a 4x4 block of consecutive rows and columns and
// reads A and B four floats per load along whichever of their dimensions is contiguous: 8 loads
// per 64 multiply-adds instead of 32. It needs M, N, K, the offsets and the non-unit strides to
// be multiples of 4, and a unit stride in each of A and B (TrainKernels checks).
layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, binding = 0) readonly buffer A_ { float A[]; };
layout(std430, binding = 1) readonly buffer B_ { float B[]; };
layout(std430, binding = 2) buffer C_ { float C[]; };
layout(push_constant) uniform PushBlock { TrainMatmulPush p; };

#ifdef VARIANT_QUAD
layout(std430, binding = 0) readonly buffer A4_ { vec4 A4[]; };
layout(std430, binding = 1) readonly buffer B4_ { vec4 B4[]; };

void main() {
    const uint m = min(gl_WorkGroupID.y * 64 + 4 * gl_LocalInvocationID.y, p.M - 4);
    const uint n = min(gl_WorkGroupID.x * 64 + 4 * gl_LocalInvocationID.x, p.N - 4);
    const bool a_along_k = p.a_cs == 1, b_along_k = p.b_rs == 1;
    mat4 acc = mat4(0.0);  // acc[j][i]: C(m + i, n + j)
    for (uint k = 0; k < p.K; k += 4) {
        mat4 a, b;  // a[kk][i] = A(m + i, k + kk); b[j][kk] = B(k + kk, n + j)
        if (a_along_k) {
            for (uint i = 0; i < 4; ++i) a[i] = A4[(p.a_off + (m + i) * p.a_rs + k) / 4];
            a = transpose(a);
        } else {
            for (uint kk = 0; kk < 4; ++kk) a[kk] = A4[(p.a_off + m + (k + kk) * p.a_cs) / 4];
        }
        if (b_along_k) {
            for (uint j = 0; j < 4; ++j) b[j] = B4[(p.b_off + k + (n + j) * p.b_cs) / 4];
        } else {
            for (uint kk = 0; kk < 4; ++kk) b[kk] = B4[(p.b_off + (k + kk) * p.b_rs + n) / 4];
            b = transpose(b);
        }
        acc += a * b;
    }
    // Threads past the edge computed a clamped block again: only the owner writes it.
    if (gl_WorkGroupID.y * 64 + 4 * gl_LocalInvocationID.y >= p.M || gl_WorkGroupID.x * 64 + 4 * gl_LocalInvocationID.x >= p.N)
        return;
    for (uint i = 0; i < 4; ++i)
        for (uint j = 0; j < 4; ++j) {
            const uint ci = p.c_off + (m + i) * p.c_rs + n + j;
            C[ci] = p.accumulate != 0 ? C[ci] + acc[j][i] : acc[j][i];
        }
}
#else

#ifdef VARIANT_TILED
shared float As[16][64];
shared float Bs[16][64];
#endif

void main() {
    const uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
    const uint tid = ty * 16 + tx;
    const uint m0 = gl_WorkGroupID.y * 64, n0 = gl_WorkGroupID.x * 64;
    float acc[4][4];
    for (uint i = 0; i < 4; ++i)
        for (uint j = 0; j < 4; ++j) acc[i][j] = 0.0;
#ifdef VARIANT_DIRECT
    uint mi[4], nj[4];
    for (uint i = 0; i < 4; ++i) mi[i] = min(m0 + ty + 16 * i, p.M - 1);
    for (uint j = 0; j < 4; ++j) nj[j] = min(n0 + tx + 16 * j, p.N - 1);
    for (uint k = 0; k < p.K; ++k) {
        float a[4], b[4];
        for (uint i = 0; i < 4; ++i) a[i] = A[p.a_off + mi[i] * p.a_rs + k * p.a_cs];
        for (uint j = 0; j < 4; ++j) b[j] = B[p.b_off + k * p.b_rs + nj[j] * p.b_cs];
        for (uint i = 0; i < 4; ++i)
            for (uint j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
    }
#else
    for (uint k0 = 0; k0 < p.K; k0 += 16) {
        for (uint e = tid; e < 1024; e += 256) {
            const uint kk = e / 64, mm = e % 64;  // consecutive threads walk m (or n)
            const uint m = m0 + mm, n = n0 + mm, k = k0 + kk;
            As[kk][mm] = (m < p.M && k < p.K) ? A[p.a_off + m * p.a_rs + k * p.a_cs] : 0.0;
            Bs[kk][mm] = (n < p.N && k < p.K) ? B[p.b_off + k * p.b_rs + n * p.b_cs] : 0.0;
        }
        barrier();
        for (uint kk = 0; kk < 16; ++kk) {
            float a[4], b[4];
            for (uint i = 0; i < 4; ++i) a[i] = As[kk][ty + 16 * i];
            for (uint j = 0; j < 4; ++j) b[j] = Bs[kk][tx + 16 * j];
            for (uint i = 0; i < 4; ++i)
                for (uint j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
        }
        barrier();
    }
#endif
    for (uint i = 0; i < 4; ++i) {
        const uint m = m0 + ty + 16 * i;
        if (m >= p.M) continue;
        for (uint j = 0; j < 4; ++j) {
            const uint n = n0 + tx + 16 * j;
            if (n >= p.N) continue;
            const uint ci = p.c_off + m * p.c_rs + n;
            C[ci] = p.accumulate != 0 ? C[ci] + acc[i][j] : acc[i][j];
        }
    }
}
#endif
