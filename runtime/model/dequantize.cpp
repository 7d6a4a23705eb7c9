#include "model/dequantize.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "model/block_format.h"
#include "model/dequantize_blocks.h"
#include "model/format_error.h"
#include "model/half_float.h"

namespace medusa {

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
