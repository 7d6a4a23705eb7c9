#include "model/dequantize.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "model/block_format.h"
#include "model/dequantize_blocks.h"

namespace medusa {

float half_to_float(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
    if (exp == 0) {
        if (mant == 0) {
            bits = sign;
        } else {  // subnormal: normalise
            exp = 127 - 15 + 1;
            while (!(mant & 0x400)) mant <<= 1, --exp;
            bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000 | (mant << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

uint16_t float_to_half(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000;
    const int32_t exp = int32_t((x >> 23) & 0xff) - 127 + 15;
    uint32_t mant = x & 0x7fffff;
    if (((x >> 23) & 0xff) == 0xff) return uint16_t(sign | 0x7c00 | (mant ? 0x200 : 0));
    if (exp >= 31) return uint16_t(sign | 0x7c00);
    if (exp <= 0) {
        if (exp < -10) return uint16_t(sign);
        mant |= 0x800000;
        const uint32_t shift = uint32_t(14 - exp);
        uint32_t h = mant >> shift;
        const uint32_t rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1))) ++h;
        return uint16_t(sign | h);
    }
    uint32_t h = (uint32_t(exp) << 10) | (mant >> 13);
    const uint32_t rem = mant & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;  // may carry into the exponent: still correct
    return uint16_t(sign | h);
}

float bf16_to_float(uint16_t b) {
    const uint32_t bits = uint32_t(b) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

uint16_t float_to_bf16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7fffffff) > 0x7f800000) return uint16_t((x >> 16) | 0x40);  // quiet NaN
    x += 0x7fff + ((x >> 16) & 1);
    return uint16_t(x >> 16);
}

float float_to_bf16_float(float f) { return bf16_to_float(float_to_bf16(f)); }

size_t tensor_nbytes(DType type, int64_t numel, int group_size) {
    if (numel < 0) throw std::invalid_argument("negative element count");
    const uint64_t n = uint64_t(numel);
    auto blocks = [&](uint64_t g) {
        if (g == 0 || n % g) throw std::invalid_argument(std::to_string(n) + " values do not split into groups of " + std::to_string(g));
        return n / g;
    };
    if (type == DType::Q8_G) return size_t(n + blocks(uint64_t(std::max(group_size, 0))) * 4);
    const BlockFormat* f = gguf_format(type);
    if (!f) throw std::invalid_argument("unknown dtype");
    return size_t(blocks(uint64_t(f->values)) * uint64_t(f->bytes));
}

std::vector<float> dequantize(const Tensor& t) {
    const int64_t n = t.numel();
    size_t want = 0;
    try {
        want = tensor_nbytes(t.type, n, t.group_size);
    } catch (const std::invalid_argument& e) {
        throw FormatError("tensor '" + t.name + "' (" + dtype_name(t.type) + "): " + e.what());
    }
    if (t.nbytes < want || (n > 0 && !t.data))
        throw FormatError("tensor '" + t.name + "' (" + dtype_name(t.type) + "): holds " + std::to_string(t.nbytes) +
                          " bytes, its shape needs " + std::to_string(want));
    std::vector<float> out(static_cast<size_t>(n));
    // An empty tensor may have no data pointer at all, and memcpy from null is undefined even for 0 bytes.
    if (n == 0) return out;
    const uint8_t* d = t.data;
    switch (t.type) {
        case DType::F32:
            std::memcpy(out.data(), d, size_t(n) * 4);
            break;
        case DType::F16:
        case DType::BF16:
            for (int64_t i = 0; i < n; ++i) {
                uint16_t h;
                std::memcpy(&h, d + i * 2, 2);
                out[i] = t.type == DType::F16 ? half_to_float(h) : bf16_to_float(h);
            }
            break;
        case DType::Q8_G: {
            for (int64_t i = 0; i < n; ++i) {
                float scale;  // the scales follow the int8 values and may be unaligned
                std::memcpy(&scale, d + n + (i / t.group_size) * 4, 4);
                out[i] = float(int8_t(d[i])) * scale;
            }
            break;
        }
        default: {  // GGUF blocks
            const BlockFormat& f = *gguf_format(t.type);
            for (int64_t b = 0; b < n / f.values; ++b) dequantize_block(t.type, d + b * f.bytes, &out[b * f.values]);
        }
    }
    return out;
}

}  // namespace medusa
