// variants: TILED DIRECT
#version 450
#include "layouts/push_constants.h"
// Head training GEMM: C(m,n) (+)= sum_k A(m,k) B(k,n), every operand addressed by element offset
// and row/column strides, so one kernel covers X W^T (forward), dY W (input gradient) and
// dY^T X (weight gradient) without transposed copies. 64x64 outputs per workgroup, 4x4 per thread.
// TILED stages operands in shared memory (GPUs); DIRECT reads them straight from memory with no
// barriers, which CPU drivers (lavapipe) run several times faster.
layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, binding = 0) readonly buffer A_ { float A[]; };
layout(std430, binding = 1) readonly buffer B_ { float B[]; };
layout(std430, binding = 2) buffer C_ { float C[]; };
layout(push_constant) uniform PushBlock { TrainMatmulPush p; };

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
