#include "llm/matmul_recorder.h"

#include <stdexcept>

#include "llm/kernel_params.h"

namespace medusa {

using namespace kernels;

MatmulRecorder::MatmulRecorder(gpu::Context& ctx, bool cpu_layouts, float rms_eps)
    : ctx_(ctx), cpu_layouts_(cpu_layouts), rms_eps_(rms_eps) {
    no_extra_ = std::make_unique<gpu::Buffer>(ctx, 16, gpu::MemoryKind::Device);
    no_extra_->fill_zero();
}

const gpu::Kernel& MatmulRecorder::kernel(const std::string& variant, const std::vector<uint32_t>& spec) {
    std::string key = variant;
    for (uint32_t c : spec) key += "/" + std::to_string(c);
    auto& k = kernels_[key];
    if (!k) k = std::make_unique<gpu::Kernel>(ctx_, "matmul_" + variant, 5, sizeof(MatmulPush), spec);
    return *k;
}

void MatmulRecorder::record(gpu::CommandSequence& seq, const MatmulCall& c) {
    if (!c.w || !c.x || !c.y) throw std::invalid_argument("a matmul needs weights, inputs and outputs");
    if (c.block_rows > 0 && (c.tokens != 1 || c.out_rows % c.block_rows != 0))
        throw std::invalid_argument("row blocks need one token and a whole number of blocks");
    const GpuMatrix& w = *c.w;
    // One dispatch per segment of a stack of several types; a fused SwiGLU and row blocks need a
    // single one (rows o and o + out_rows, or block b's rows, in one encoding).
    if ((c.flags & kMatmulSwiglu) || c.block_rows > 0) w.only();
    for (const GpuMatrix::Segment& s : w.segments) {
        const int rows = w.segments.size() == 1 ? c.out_rows : s.rows;
        MatmulPush push{uint32_t(w.cols), uint32_t(rows),  uint32_t(c.tokens), s.group_shift(),
                        c.flags,          c.x_stride,      c.y_stride,         rms_eps_,
                        uint32_t(c.block_rows > 0 ? c.block_rows : rows),      uint32_t(s.first_row)};
        const MatmulGeometry g = matmul_geometry(ctx_, uint32_t(rows), c.tokens, cpu_layouts_);
        seq.dispatch(kernel(s.variant, g.spec), {*s.words, *s.scales, *c.x, *c.y, c.extra ? *c.extra : *no_extra_},
                     push, g.groups_x, g.groups_y);
    }
}

}  // namespace medusa
