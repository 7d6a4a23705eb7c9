#include "llm/gpu_matrix.h"

#include <cstring>
#include <stdexcept>

#include "model/dequantize.h"

namespace medusa {

namespace {

struct Packed {
    std::string variant;
    int group = 1;
    std::vector<uint32_t> words;
    std::vector<float> scales;
};

// Appends one tensor's elements to `out` in the layout of out.variant.
void append(Packed& out, const Tensor& t) {
    const int64_t n = t.numel();
    if (out.variant == "f32") {
        auto f = dequantize(t);
        const size_t at = out.words.size();
        out.words.resize(at + f.size());
        std::memcpy(&out.words[at], f.data(), f.size() * 4);
    } else if (out.variant == "f16") {
        const size_t at = out.words.size();
        out.words.resize(at + size_t(n / 2));
        std::memcpy(&out.words[at], t.data, size_t(n) * 2);
    } else if (out.variant == "q8" && t.type == DType::Q8_G) {
        const size_t at = out.words.size();
        out.words.resize(at + size_t(n / 4));
        std::memcpy(&out.words[at], t.data, size_t(n));
        const float* s = reinterpret_cast<const float*>(t.data + n);
        out.scales.insert(out.scales.end(), s, s + n / t.group_size);
    } else if (out.variant == "q8") {  // GGUF Q8_0: f16 scale + 32 int8 per block
        for (int64_t b = 0; b < n / 32; ++b) {
            const uint8_t* blk = t.data + b * 34;
            uint16_t d;
            std::memcpy(&d, blk, 2);
            out.scales.push_back(half_to_float(d));
            uint32_t w[8];
            std::memcpy(w, blk + 2, 32);
            out.words.insert(out.words.end(), w, w + 8);
        }
    } else {  // q4: GGUF Q4_0 blocks to nibbles in element order
        for (int64_t b = 0; b < n / 32; ++b) {
            const uint8_t* blk = t.data + b * 18;
            uint16_t d;
            std::memcpy(&d, blk, 2);
            out.scales.push_back(half_to_float(d));
            uint8_t q[32];
            for (int j = 0; j < 16; ++j) q[j] = blk[2 + j] & 15, q[j + 16] = blk[2 + j] >> 4;
            for (int w = 0; w < 4; ++w) {
                uint32_t word = 0;
                for (int k = 0; k < 8; ++k) word |= uint32_t(q[w * 8 + k]) << (4 * k);
                out.words.push_back(word);
            }
        }
    }
}

std::string native_variant(const Tensor& t, int cols) {
    switch (t.type) {
        case DType::F16: return cols % 2 == 0 ? "f16" : "f32";
        case DType::Q8_0: return "q8";
        // Shaders find a word's scale with a shift: groups must be powers of two of >= 4 values.
        case DType::Q8_G: return cols % 4 == 0 && t.group_size >= 4 && !(t.group_size & (t.group_size - 1)) ? "q8" : "f32";
        case DType::Q4_0: return "q4";
        default: return "f32";
    }
}

int native_group(const Tensor& t) { return t.type == DType::Q8_G ? t.group_size : 32; }

}  // namespace

GpuMatrix upload_matrix(gpu::Context& ctx, const std::vector<const Tensor*>& parts) {
    const int cols = int(parts.front()->shape.back());
    int rows = 0;
    for (const Tensor* t : parts) {
        if (t->shape.size() != 2 || t->shape[1] != cols)
            throw std::invalid_argument("tensor " + t->name + " cannot be stacked: column counts differ");
        rows += int(t->shape[0]);
    }
    Packed p;
    p.variant = native_variant(*parts.front(), cols);
    p.group = native_group(*parts.front());
    for (const Tensor* t : parts)
        if (native_variant(*t, cols) != p.variant || t->type != parts.front()->type || native_group(*t) != p.group)
            p.variant = "f32";
    for (const Tensor* t : parts) append(p, *t);
    if (p.scales.empty()) p.scales.push_back(0.0f);  // keeps the binding valid

    GpuMatrix m;
    m.variant = p.variant;
    m.rows = rows;
    m.cols = cols;
    m.group = p.variant == "q8" || p.variant == "q4" ? p.group : 1;
    m.words = std::make_unique<gpu::Buffer>(ctx, p.words.size() * 4, gpu::MemoryKind::Device);
    m.words->upload(p.words.data(), p.words.size() * 4);
    m.scales = std::make_unique<gpu::Buffer>(ctx, p.scales.size() * 4, gpu::MemoryKind::Device);
    m.scales->upload(p.scales.data(), p.scales.size() * 4);
    return m;
}

std::unique_ptr<gpu::Buffer> upload_vector(gpu::Context& ctx, const Tensor& t) {
    auto f = dequantize(t);
    auto b = std::make_unique<gpu::Buffer>(ctx, f.size() * 4, gpu::MemoryKind::Device);
    b->upload(f.data(), f.size() * 4);
    return b;
}

}  // namespace medusa
