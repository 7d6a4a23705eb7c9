#include "llm/gpu_matrix.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "llm/block_repack.h"
#include "model/dequantize.h"

namespace medusa {

namespace {

struct Packed {
    MatrixVariant variant = MatrixVariant::F32;
    int group = 1;
    std::vector<uint32_t> words;
    std::vector<float> scales;
};

// Appends one tensor's elements to `out` in the layout of out.variant.
void append(Packed& out, const Tensor& t) {
    const int64_t n = t.numel();
    const size_t at = out.words.size();
    switch (out.variant) {
        case MatrixVariant::F32: {
            auto f = dequantize(t);
            out.words.resize(at + f.size());
            std::memcpy(&out.words[at], f.data(), f.size() * 4);
            break;
        }
        case MatrixVariant::F16:
        case MatrixVariant::BF16:
            out.words.resize(at + size_t(n / 2));
            std::memcpy(&out.words[at], t.data, size_t(n) * 2);
            break;
        case MatrixVariant::Q8: {  // llama2.c: int8 values, then one f32 scale per group
            out.words.resize(at + size_t(n / 4));
            std::memcpy(&out.words[at], t.data, size_t(n));
            const float* s = reinterpret_cast<const float*>(t.data + n);
            out.scales.insert(out.scales.end(), s, s + n / t.group_size);
            break;
        }
        default: repack_block_rows(t, out.words);  // the GGUF block variants
    }
}

MatrixVariant native_variant(const Tensor& t, int cols) {
    using enum MatrixVariant;
    if (const BlockLayout* l = block_layout(t.type)) return cols % l->block == 0 ? l->variant : F32;
    switch (t.type) {
        case DType::F16: return cols % 2 == 0 ? F16 : F32;
        case DType::BF16: return cols % 2 == 0 ? BF16 : F32;
        // Shaders find a word's scale with a shift: groups must be powers of two of >= 4 values.
        case DType::Q8_G: return cols % 4 == 0 && t.group_size >= 4 && !(t.group_size & (t.group_size - 1)) ? Q8 : F32;
        default: return F32;
    }
}

// The variant one segment of `run` (tensors of one native variant) is uploaded in.
MatrixVariant segment_variant(const std::vector<const Tensor*>& run, int cols) {
    MatrixVariant variant = native_variant(*run.front(), cols);
    for (const Tensor* t : run)  // one group size per dispatch
        if (t->type == DType::Q8_G && t->group_size != run.front()->group_size) variant = MatrixVariant::F32;
    return variant;
}

// Consecutive parts of one native type share a segment.
std::vector<std::vector<const Tensor*>> segment_runs(const std::vector<const Tensor*>& parts) {
    const int cols = int(parts.front()->shape.back());
    std::vector<std::vector<const Tensor*>> runs;
    for (const Tensor* t : parts) {
        if (t->shape.size() != 2 || t->shape[1] != cols)
            throw std::invalid_argument("tensor " + t->name + " cannot be stacked: column counts differ");
        if (runs.empty() || native_variant(*t, cols) != native_variant(*runs.back().front(), cols)) runs.emplace_back();
        runs.back().push_back(t);
    }
    return runs;
}

GpuMatrix::Segment upload_segment(gpu::Context& ctx, const std::vector<const Tensor*>& parts, int first_row,
                                  int cols) {
    Packed p;
    p.variant = segment_variant(parts, cols);
    p.group = parts.front()->type == DType::Q8_G ? parts.front()->group_size : 1;
    int rows = 0;
    for (const Tensor* t : parts) rows += int(t->shape[0]);
    for (const Tensor* t : parts) append(p, *t);
    if (p.scales.empty()) p.scales.push_back(0.0f);  // keeps the binding valid

    GpuMatrix::Segment s;
    s.variant = p.variant;
    s.first_row = first_row;
    s.rows = rows;
    s.group = p.variant == MatrixVariant::Q8 ? p.group : 1;
    s.words = std::make_unique<gpu::Buffer>(ctx, p.words.size() * 4, gpu::MemoryKind::Device);
    s.words->upload(p.words.data(), p.words.size() * 4);
    s.scales = std::make_unique<gpu::Buffer>(ctx, p.scales.size() * 4, gpu::MemoryKind::Device);
    s.scales->upload(p.scales.data(), p.scales.size() * 4);
    return s;
}

}  // namespace

size_t GpuMatrix::bytes() const {
    size_t b = 0;
    for (const Segment& s : segments) b += s.words->size() + (s.variant == MatrixVariant::Q8 ? s.scales->size() : 0);
    return b;
}

std::string GpuMatrix::variant() const {
    std::string v;
    for (const Segment& s : segments) {
        if (!v.empty()) v += '+';
        v += variant_name(s.variant);
    }
    return v;
}

const GpuMatrix::Segment& GpuMatrix::only() const {
    if (segments.size() != 1)
        throw std::invalid_argument("a " + variant() + " stack of matrices cannot run as one dispatch");
    return segments.front();
}

GpuMatrix upload_matrix(gpu::Context& ctx, const std::vector<const Tensor*>& parts) {
    GpuMatrix m;
    m.cols = int(parts.front()->shape.back());
    for (const auto& run : segment_runs(parts)) {
        GpuMatrix::Segment s = upload_segment(ctx, run, m.rows, m.cols);
        m.rows += s.rows;
        m.segments.push_back(std::move(s));
    }
    return m;
}

std::vector<SegmentBytes> planned_segments(const std::vector<const Tensor*>& parts) {
    const int cols = int(parts.front()->shape.back());
    std::vector<SegmentBytes> out;
    for (const auto& run : segment_runs(parts)) {
        const MatrixVariant variant = segment_variant(run, cols);
        SegmentBytes b;
        for (const Tensor* t : run) {
            const size_t n = size_t(t->numel());
            switch (variant) {
                case MatrixVariant::F32: b.words += 4 * n; break;
                case MatrixVariant::F16:
                case MatrixVariant::BF16: b.words += 2 * n; break;
                case MatrixVariant::Q8: b.words += n, b.scales += 4 * (n / size_t(t->group_size)); break;
                default: b.words += size_t(t->shape[0]) * block_row_words(*block_layout(t->type), cols) * 4;
            }
        }
        b.scales = std::max<size_t>(b.scales, 4);  // the one float that keeps the binding valid
        out.push_back(b);
    }
    return out;
}

std::unique_ptr<gpu::Buffer> upload_floats(gpu::Context& ctx, const std::vector<float>& v) {
    auto b = std::make_unique<gpu::Buffer>(ctx, v.size() * 4, gpu::MemoryKind::Device);
    b->upload(v.data(), v.size() * 4);
    return b;
}

std::unique_ptr<gpu::Buffer> upload_vector(gpu::Context& ctx, const Tensor& t) { return upload_floats(ctx, dequantize(t)); }

std::unique_ptr<gpu::Buffer> upload_qkv_bias(gpu::Context& ctx, const ModelFile& file, int layer) {
    const LlamaConfig& c = file.config;
    if (!c.qkv_bias) return nullptr;
    std::vector<float> bias;
    const std::string p = "layers." + std::to_string(layer) + ".";
    for (const char* part : {"bq", "bk", "bv"}) {
        const auto v = dequantize(file.get(p + part));
        bias.insert(bias.end(), v.begin(), v.end());
    }
    return upload_floats(ctx, bias);
}

std::unique_ptr<gpu::Buffer> upload_qk_norm(gpu::Context& ctx, const ModelFile& file, int layer) {
    if (!file.config.arch.qk_norm) return nullptr;
    const std::string p = "layers." + std::to_string(layer) + ".";
    std::vector<float> gains = dequantize(file.get(p + "q_norm"));
    const auto k = dequantize(file.get(p + "k_norm"));
    gains.insert(gains.end(), k.begin(), k.end());
    return upload_floats(ctx, gains);
}

std::unique_ptr<gpu::Buffer> upload_rope_factors(gpu::Context& ctx, const ModelFile& file, int context) {
    const Tensor* f = rope_factor_tensor(file, context);
    return upload_floats(ctx, f ? dequantize(*f) : std::vector<float>(size_t(rotated_dims(file.config) / 2), 1.0f));
}

}  // namespace medusa
