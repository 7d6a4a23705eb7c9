// GGUF block types expanded to f32 with ggml's own arithmetic, operation for operation (the
// same products and differences, in the same order, no fused multiply-add: CMake compiles this
// file with -ffp-contract=off), so the values equal llama.cpp's bit for bit.
#include "model/dequantize_blocks.h"
#include "model/half_float.h"

#include <cstring>
#include <stdexcept>

namespace medusa {

namespace {

float half_at(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return half_to_float(h);
}

void q4_0(const uint8_t* b, float* y) {
    const float d = half_at(b);
    for (int j = 0; j < 16; ++j) {
        y[j] = float((b[2 + j] & 0x0F) - 8) * d;
        y[j + 16] = float((b[2 + j] >> 4) - 8) * d;
    }
}

void q4_1(const uint8_t* b, float* y) {
    const float d = half_at(b), m = half_at(b + 2);
    for (int j = 0; j < 16; ++j) {
        y[j] = float(b[4 + j] & 0x0F) * d + m;
        y[j + 16] = float(b[4 + j] >> 4) * d + m;
    }
}

// Q5_0 and Q5_1: bit j of qh is the fifth bit of value j.
void q5(const uint8_t* b, float* y, bool with_min) {
    const float d = half_at(b), m = with_min ? half_at(b + 2) : 0.0f;
    const uint8_t* qh_bytes = b + (with_min ? 4 : 2);
    const uint8_t* qs = qh_bytes + 4;
    uint32_t qh;
    std::memcpy(&qh, qh_bytes, 4);
    for (int j = 0; j < 16; ++j) {
        const int lo = (qs[j] & 0x0F) | int(((qh >> j) << 4) & 0x10);
        const int hi = (qs[j] >> 4) | int((qh >> (j + 12)) & 0x10);
        if (with_min) {
            y[j] = float(lo) * d + m;
            y[j + 16] = float(hi) * d + m;
        } else {
            y[j] = float(lo - 16) * d;
            y[j + 16] = float(hi - 16) * d;
        }
    }
}

void q8_0(const uint8_t* b, float* y) {
    const float d = half_at(b);
    for (int j = 0; j < 32; ++j) y[j] = float(int8_t(b[2 + j])) * d;
}

void q2_k(const uint8_t* b, float* y) {
    const uint8_t* scales = b;
    const uint8_t* q = b + 16;
    const float d = half_at(b + 80), min = half_at(b + 82);
    int is = 0;
    for (int n = 0; n < 256; n += 128, q += 32)
        for (int shift = 0; shift < 8; shift += 2)
            for (int half = 0; half < 2; ++half) {
                const uint8_t sc = scales[is++];
                const float dl = d * float(sc & 0xF), ml = min * float(sc >> 4);
                for (int l = 0; l < 16; ++l) *y++ = dl * float((q[l + 16 * half] >> shift) & 3) - ml;
            }
}

// The sixteen 6-bit scales of a Q3_K block, unpacked from their 12 bytes.
void q3_k_scales(const uint8_t* packed, int8_t out[16]) {
    for (int i = 0; i < 16; ++i) {
        const int low = i < 8 ? (packed[i] & 0x0F) : (packed[i - 8] >> 4);
        const int high = (packed[8 + (i % 4)] >> (2 * (i / 4))) & 3;
        out[i] = int8_t(low | (high << 4));
    }
}

void q3_k(const uint8_t* b, float* y) {
    const uint8_t* hm = b;
    const uint8_t* q = b + 32;
    int8_t scales[16];
    q3_k_scales(b + 96, scales);
    const float d_all = half_at(b + 108);
    int is = 0;
    uint8_t m = 1;
    for (int n = 0; n < 256; n += 128, q += 32)
        for (int shift = 0; shift < 8; shift += 2, m <<= 1)
            for (int half = 0; half < 2; ++half) {
                const float dl = d_all * float(scales[is++] - 32);
                for (int l = 0; l < 16; ++l) {
                    const int i = l + 16 * half;
                    *y++ = dl * float(((q[i] >> shift) & 3) - ((hm[i] & m) ? 0 : 4));
                }
            }
}

void q4_k(const uint8_t* b, float* y) {
    const float d = half_at(b), min = half_at(b + 2);
    const uint8_t* q = b + 16;
    for (int j = 0; j < 8; j += 2, q += 32) {
        const KScaleMin a = k_scale_min(j, b + 4), c = k_scale_min(j + 1, b + 4);
        const float d1 = d * float(a.scale), m1 = min * float(a.min);
        const float d2 = d * float(c.scale), m2 = min * float(c.min);
        for (int l = 0; l < 32; ++l) *y++ = d1 * float(q[l] & 0xF) - m1;
        for (int l = 0; l < 32; ++l) *y++ = d2 * float(q[l] >> 4) - m2;
    }
}

void q5_k(const uint8_t* b, float* y) {
    const float d = half_at(b), min = half_at(b + 2);
    const uint8_t* qh = b + 16;
    const uint8_t* ql = b + 48;
    uint8_t u1 = 1, u2 = 2;
    for (int j = 0; j < 8; j += 2, ql += 32, u1 <<= 2, u2 <<= 2) {
        const KScaleMin a = k_scale_min(j, b + 4), c = k_scale_min(j + 1, b + 4);
        const float d1 = d * float(a.scale), m1 = min * float(a.min);
        const float d2 = d * float(c.scale), m2 = min * float(c.min);
        for (int l = 0; l < 32; ++l) *y++ = d1 * float((ql[l] & 0xF) + (qh[l] & u1 ? 16 : 0)) - m1;
        for (int l = 0; l < 32; ++l) *y++ = d2 * float((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
    }
}

void q6_k(const uint8_t* b, float* y) {
    const float d = half_at(b + 208);
    const uint8_t* ql = b;
    const uint8_t* qh = b + 128;
    const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192);
    for (int n = 0; n < 256; n += 128, y += 128, ql += 64, qh += 32, sc += 8)
        for (int l = 0; l < 32; ++l) {
            const int is = l / 16;
            const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
            const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
            const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
            const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
            y[l] = d * float(sc[is]) * float(q1);
            y[l + 32] = d * float(sc[is + 2]) * float(q2);
            y[l + 64] = d * float(sc[is + 4]) * float(q3);
            y[l + 96] = d * float(sc[is + 6]) * float(q4);
        }
}

void iq4_nl(const uint8_t* b, float* y) {
    const float d = half_at(b);
    for (int j = 0; j < 16; ++j) {
        y[j] = d * float(kIq4Values[b[2 + j] & 0xF]);
        y[j + 16] = d * float(kIq4Values[b[2 + j] >> 4]);
    }
}

void iq4_xs(const uint8_t* b, float* y) {
    const float d = half_at(b);
    uint16_t scales_h;
    std::memcpy(&scales_h, b + 2, 2);
    const uint8_t* qs = b + 8;
    for (int ib = 0; ib < 8; ++ib, y += 32, qs += 16) {
        const int ls = ((b[4 + ib / 2] >> 4 * (ib % 2)) & 0xF) | (((scales_h >> 2 * ib) & 3) << 4);
        const float dl = d * float(ls - 32);
        for (int j = 0; j < 16; ++j) {
            y[j] = dl * float(kIq4Values[qs[j] & 0xF]);
            y[j + 16] = dl * float(kIq4Values[qs[j] >> 4]);
        }
    }
}

}  // namespace

KScaleMin k_scale_min(int j, const uint8_t* q) {
    if (j < 4) return {uint8_t(q[j] & 63), uint8_t(q[j + 4] & 63)};
    return {uint8_t((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4)), uint8_t((q[j + 4] >> 4) | ((q[j] >> 6) << 4))};
}

void dequantize_block(DType type, const uint8_t* block, float* out) {
    switch (type) {
        case DType::Q4_0: return q4_0(block, out);
        case DType::Q4_1: return q4_1(block, out);
        case DType::Q5_0: return q5(block, out, false);
        case DType::Q5_1: return q5(block, out, true);
        case DType::Q8_0: return q8_0(block, out);
        case DType::Q2_K: return q2_k(block, out);
        case DType::Q3_K: return q3_k(block, out);
        case DType::Q4_K: return q4_k(block, out);
        case DType::Q5_K: return q5_k(block, out);
        case DType::Q6_K: return q6_k(block, out);
        case DType::IQ4_NL: return iq4_nl(block, out);
        case DType::IQ4_XS: return iq4_xs(block, out);
        default: throw std::invalid_argument(std::string(dtype_name(type)) + " is not a GGUF block type");
    }
}

}  // namespace medusa
