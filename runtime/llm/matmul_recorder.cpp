#include "llm/matmul_recorder.h"

#include <stdexcept>

#include "llm/kernel_params.h"

namespace medusa {

using namespace kernels;

MatmulRecorder::MatmulRecorder(gpu::Context& ctx, bool cpu_layouts, float rms_eps, MatmulConfig config)
    : ctx_(ctx), cpu_layouts_(cpu_layouts), rms_eps_(rms_eps) {
    set_config(config);
    no_extra_ = std::make_unique<gpu::Buffer>(ctx, 16, gpu::MemoryKind::Device);
    no_extra_->fill_zero();
}

void MatmulRecorder::set_config(const MatmulConfig& config) {
    if (config.tiled_from > 0)
        if (const std::string why = matmul_tile_problem(config.tile, matmul_limits(ctx_)); !why.empty())
            throw std::invalid_argument(why);
    config_ = config;
}

const gpu::Kernel& MatmulRecorder::kernel(gpu::Shader shader, const std::vector<gpu::BindingKind>& bindings,
                                          const std::vector<uint32_t>& spec) {
    auto& k = kernels_[{shader, spec}];
    if (!k) k = std::make_unique<gpu::Kernel>(ctx_, shader, bindings, sizeof(MatmulPush), spec);
    return *k;
}

bool MatmulRecorder::tiled(const MatmulCall& c) const {
    if (config_.tiled_from == 0 || c.tokens < int(config_.tiled_from) || c.block_rows > 0 || c.x_stride == 0 ||
        (c.flags & ~(kMatmulNorm | kMatmulAccum | kMatmulSwiglu | kMatmulGelu)))
        return false;
    // A grid the device can run (a classifier of millions of rows cannot).
    return tiled_matmul_geometry(config_.tile, uint32_t(c.out_rows), c.tokens, c.flags).groups_x <= 65535;
}

bool MatmulRecorder::texel_reads(const GpuMatrix::Segment& s, const gpu::Buffer& x) const {
    using gpu::TexelFormat;
    return config_.texel && s.words->texel_view(TexelFormat::U32) && s.scales->texel_view(TexelFormat::F32) &&
           x.texel_view(TexelFormat::F32x4);
}

bool MatmulRecorder::fuses_rope(const MatmulCall& c) const {
    if (!c.w || !c.x || tiled(c)) return false;
    if (!cpu_layouts_) return true;  // (an even number of rows per subgroup: record() sees to it)
    for (const GpuMatrix::Segment& s : c.w->segments)
        if (!texel_reads(s, *c.x)) return false;
    return true;
}

void MatmulRecorder::record(gpu::CommandSequence& seq, const MatmulCall& c) {
    if (!c.w || !c.x || !c.y) throw std::invalid_argument("a matmul needs weights, inputs and outputs");
    const MatmulRope* rope = c.flags & kMatmulRope ? c.rope : nullptr;
    if ((c.flags & kMatmulRope) && (!rope || !fuses_rope(c) || c.block_rows > 0 || (c.flags & kMatmulSwiglu)))
        throw std::invalid_argument("a fused RoPE needs its buffers, one token block, an untiled kernel and, in "
                                    "the lane-per-row layout, texel reads");
    if (c.block_rows > 0 && (c.tokens != 1 || c.out_rows % c.block_rows != 0))
        throw std::invalid_argument("row blocks need one token and a whole number of blocks");
    const GpuMatrix& w = *c.w;
    // One dispatch per segment of a stack of several types; a fused SwiGLU and row blocks need a
    // single one (rows o and o + out_rows, or block b's rows, in one encoding).
    if ((c.flags & kMatmulSwiglu) || c.block_rows > 0) w.only();
    for (const GpuMatrix::Segment& s : w.segments) {
        const int rows = w.segments.size() == 1 ? c.out_rows : s.rows;
        MatmulPush push{uint32_t(w.cols), uint32_t(rows), uint32_t(c.tokens), s.group_shift(), c.x_stride, c.y_stride,
                        rms_eps_, uint32_t(c.block_rows > 0 ? c.block_rows : rows), uint32_t(s.first_row)};
        if (rope) {
            push.rope_q_dim = rope->q_dim, push.rope_kv_dim = rope->kv_dim, push.rope_head_dim = rope->head_dim;
            push.rope_theta = rope->theta, push.rope_cache_offset = rope->cache_offset;
            push.rope_position_scale = rope->position_scale;
            push.rope_rotated = rope->rotated > 0 ? rope->rotated : rope->head_dim;
            push.rope_attn_factor = rope->attn_factor;
            push.rope_cache_rows = rope->cache_rows;
        }
        const gpu::Buffer& extra = c.extra ? *c.extra : *no_extra_;
        if (tiled(c)) {
            const MatmulGeometry g = tiled_matmul_geometry(config_.tile, uint32_t(rows), c.tokens, c.flags);
            seq.dispatch(kernel(matmul_tiled_shader(s.variant, config_.tile.kernel), matmul_tiled_bindings(), g.spec),
                         {*s.words, *s.scales, *c.x, *c.y, extra}, push, g.groups_x, g.groups_y);
            ++tiled_dispatches_;
            continue;
        }
        // The fusions are a specialization constant: each combination its own pipeline (matmul.comp says why).
        // A fused RoPE in the subgroup layout needs each row's partner (rows 2i and 2i + 1) in the
        // same group of rows: two or four a subgroup.
        const uint32_t rows_per_subgroup = rope ? std::max(2u, config_.rows & ~1u) : config_.rows;
        const MatmulGeometry g =
            matmul_geometry(ctx_, uint32_t(rows), c.tokens, c.flags, cpu_layouts_, config_.workgroup, rows_per_subgroup,
                            uint32_t(std::max(0, c.block_rows)), config_.quads);
        using gpu::TexelFormat;
        const bool texel = texel_reads(s, *c.x);
        texel_dispatches_ += texel ? 1 : 0;
        // The five storage buffers, then the TEXEL variant's views, then the ROPE variant's buffers.
        std::vector<gpu::BufferRef> buffers{*s.words, *s.scales, *c.x, *c.y, extra};
        if (texel)
            buffers.insert(buffers.end(), {gpu::texel(*s.words, TexelFormat::U32), gpu::texel(*s.words, TexelFormat::U32x2),
                                           gpu::texel(*s.words, TexelFormat::U32x4), gpu::texel(*s.scales, TexelFormat::F32),
                                           gpu::texel(*c.x, TexelFormat::F32x4), gpu::texel(extra, TexelFormat::F32x4)});
        if (rope) buffers.insert(buffers.end(), {*rope->keys, *rope->values, *rope->params, *rope->bias, *rope->factors});
        const bool fused = rope != nullptr;
        seq.dispatch(kernel(matmul_shader(s.variant, texel, fused), matmul_bindings(texel, fused), g.spec), buffers, push,
                     g.groups_x, g.groups_y);
    }
}

}  // namespace medusa
