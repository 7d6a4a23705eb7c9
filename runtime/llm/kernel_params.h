// Fusion flags, dispatch geometry and the push-constant blocks of the transformer shaders, shared
// by the model and the kernel tests.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/command_sequence.h"
#include "gpu/context.h"
#include "gpu/kernel.h"
#include "layouts/push_constants.h"
#include "llm/matrix_variant.h"

namespace medusa::kernels {

using medusa::elements_per_word;

constexpr uint32_t kMatmulNorm = 1, kMatmulAccum = 2, kMatmulSwiglu = 4, kMatmulResblock = 8, kMatmulRope = 16;
constexpr uint32_t kMatmulGelu = 32;  // with kMatmulSwiglu: GeGLU's GELU (tanh) gate instead of SiLU
constexpr uint32_t kMatmulTile = 8;  // tokens per matmul workgroup (TILE in matmul.comp) for blocks
constexpr uint32_t kMatmulMaxRows = 4;  // output rows per subgroup at most (MAX_ROWS in matmul.comp)
// Blocks smaller than a tile (plain decoding, small trees) get a pipeline specialised to their size.
inline uint32_t matmul_tile(int n_tokens) { return n_tokens < int(kMatmulTile) ? uint32_t(n_tokens) : kMatmulTile; }

// The push-constant blocks (layouts/push_constants.h, shared with the shaders).
using layout::ArgmaxPush;
using layout::AttentionPush;
using layout::EmbedPush;
using layout::KvCompactPush;
using layout::MatmulPush;
using layout::NodeStatsPush;
using layout::RmsnormPush;
using layout::RopePush;
using layout::RowPush;
using layout::FeatureStorePush;
using layout::TopkPush;

inline uint32_t div_up(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

// CPU drivers (lavapipe) execute a subgroup as one SIMD register and turn per-lane addresses
// into gathers, so they get shader layouts whose inputs are uniform loads (matmul's LANE_PER_ROW,
// attention's ONE_PASS_HEAD_DIM); GPUs get layouts whose weight reads coalesce.
inline bool prefers_cpu_layouts(const gpu::Context& ctx) { return ctx.info().kind == gpu::DeviceKind::Cpu; }

// The pipeline's specialization constants (TILE, LANE_PER_ROW, the workgroup size, SUBGROUP, the
// kMatmul* FUSIONS, ROWS, QUADS) and its workgroup grid: a lane per row, or a subgroup per
// `rows_per_subgroup` rows, its lanes reading a word or (`quads`) four words a step. Row blocks
// (block_rows > 0) keep a subgroup's rows within one block.
struct MatmulGeometry {
    std::vector<uint32_t> spec;
    uint32_t groups_x, groups_y;
};
inline MatmulGeometry matmul_geometry(const gpu::Context& ctx, uint32_t rows, int n_tokens, uint32_t fusions,
                                      bool lane_per_row, uint32_t workgroup = 64, uint32_t rows_per_subgroup = 1,
                                      uint32_t block_rows = 0, bool quads = false) {
    const uint32_t tile = matmul_tile(n_tokens);
    const uint32_t subgroup = ctx.info().subgroup_size;
    uint32_t per_subgroup = std::clamp(rows_per_subgroup, 1u, kMatmulMaxRows);
    if (lane_per_row || (block_rows > 0 && block_rows % per_subgroup != 0)) per_subgroup = 1;
    const uint32_t rows_per_group =
        lane_per_row ? workgroup : std::max(1u, workgroup / std::max(1u, subgroup)) * per_subgroup;
    return {{tile, lane_per_row ? 1u : 0u, workgroup, subgroup, fusions, per_subgroup, quads && !lane_per_row ? 1u : 0u},
            std::min(div_up(rows, rows_per_group), 65535u), div_up(uint32_t(n_tokens), tile)};
}

// A shader's bindings: `storage` storage buffers, then, for its TEXEL variant, `texels` texel views.
inline std::vector<gpu::BindingKind> storage_then_texels(uint32_t storage, bool texel, uint32_t texels) {
    std::vector<gpu::BindingKind> kinds(storage, gpu::BindingKind::Storage);
    if (texel) kinds.resize(storage + texels, gpu::BindingKind::Texel);
    return kinds;
}
// matmul.comp: weights, scales, inputs, outputs, gains; its TEXEL variants add the weights as
// R32/RG32/RGBA32 and the scales, inputs and gains as texel views; its ROPE variants then
// kMatmulRope's five buffers.
inline std::vector<gpu::BindingKind> matmul_bindings(bool texel, bool rope = false) {
    std::vector<gpu::BindingKind> kinds = storage_then_texels(5, texel, 6);
    if (rope) kinds.resize(kinds.size() + 5, gpu::BindingKind::Storage);
    return kinds;
}
// matmul_tiled.comp and matmul_coopmat.comp: matmul.comp's five storage buffers.
inline std::vector<gpu::BindingKind> matmul_tiled_bindings() { return storage_then_texels(5, false, 0); }
// medusa_topk.comp: three storage buffers, then the heads' logits as RGBA32F texels.
inline std::vector<gpu::BindingKind> medusa_topk_bindings(bool texel) { return storage_then_texels(3, texel, 1); }
// attention.comp: five storage buffers, then the cached keys and values and q (the qkv buffer) as
// RGBA32F texel views and the block's params as RGBA32UI.
inline std::vector<gpu::BindingKind> attention_bindings(bool texel) { return storage_then_texels(5, texel, 4); }
// argmax.comp and node_stats.comp (logit_rows.glsl): the logits and the output, then the logits as
// RGBA32F texels.
inline std::vector<gpu::BindingKind> logit_rows_bindings(bool texel) { return storage_then_texels(2, texel, 1); }

// attention.comp's one-pass layout (CPU drivers, one_pass_head_dim > 0): block tokens per subgroup,
// each key and value fetched once for all of them; fewer for large heads, whose sums per token
// live in registers. Its workgroups: subgroup_item_groups(ctx, n_heads * div_up(T, this)).
inline uint32_t attention_tokens_per_subgroup(uint32_t one_pass_head_dim, int n_tokens) {
    if (one_pass_head_dim == 0) return 1;
    return std::min({uint32_t(std::max(1, n_tokens)), 8u, std::max(1u, 256u / one_pass_head_dim)});
}

// Workgroups for shaders that give each item one subgroup of a 64-wide workgroup (attention.comp:
// each (token, head) pair; node_stats.comp: each token).
inline uint32_t subgroup_item_groups(const gpu::Context& ctx, uint32_t items) {
    return div_up(items, std::max(1u, 64u / std::max(1u, ctx.info().subgroup_size)));
}

// The shaders over rows of logits (logit_rows.glsl), each with a TEXEL variant.
enum class LogitRows { Argmax, NodeStats };
inline gpu::Shader logit_rows_shader(LogitRows shader, bool texel) {
    using gpu::Shader;
    switch (shader) {
        case LogitRows::Argmax: return texel ? Shader::argmax_texel : Shader::argmax;
        case LogitRows::NodeStats: return texel ? Shader::node_stats_texel : Shader::node_stats;
    }
    throw std::logic_error("no logit-rows shader " + std::to_string(int(shader)));
}
// The other shaders with a TEXEL variant.
inline gpu::Shader attention_shader(bool texel) { return texel ? gpu::Shader::attention_texel : gpu::Shader::attention; }
inline gpu::Shader medusa_topk_shader(bool texel) {
    return texel ? gpu::Shader::medusa_topk_texel : gpu::Shader::medusa_topk;
}

// argmax.comp's and node_stats.comp's lanes per row on GPUs (their WHOLE_WORKGROUP mode): as many
// as the device runs in a workgroup, up to 512, within the shaders' 64 subgroups. 0 on CPU
// drivers: a subgroup a row.
inline uint32_t logit_row_width(const gpu::Context& ctx, bool cpu_layouts) {
    if (cpu_layouts) return 0;
    const uint32_t subgroup = std::max(1u, ctx.info().subgroup_size);
    return std::min({512u, ctx.limits().max_workgroup_size, 64u * subgroup}) / subgroup * subgroup;
}
// Shaders over rows of logits (argmax.comp, node_stats.comp, one subgroup a row): their TEXEL
// variant where each row is whole RGBA32F texels and the device can view the buffer so.
// row_width > 0 (logit_row_width): one workgroup of that many lanes a row.
inline std::unique_ptr<gpu::Kernel> logit_rows_kernel(gpu::Context& ctx, LogitRows shader, uint32_t vocab,
                                                      const gpu::Buffer& logits, uint32_t push_bytes,
                                                      uint32_t row_width = 0) {
    const bool texel = vocab % 4 == 0 && logits.texel_view(gpu::TexelFormat::F32x4);
    return std::make_unique<gpu::Kernel>(ctx, logit_rows_shader(shader, texel), logit_rows_bindings(texel), push_bytes,
                                         row_width > 0 ? std::vector<uint32_t>{row_width, 1u} : std::vector<uint32_t>{});
}
// Records `k` (from logit_rows_kernel) over the first `rows` rows of `logits`, writing `out`; a
// workgroup a row where `k` was made with a row width.
template <class Push>
void record_logit_rows(gpu::CommandSequence& seq, const gpu::Kernel& k, const gpu::Buffer& logits,
                       const gpu::Buffer& out, const Push& push, uint32_t rows, bool row_per_workgroup = false) {
    const uint32_t groups = row_per_workgroup ? rows : subgroup_item_groups(seq.context(), rows);
    if (k.num_buffers() == 3)
        seq.dispatch(k, {logits, out, gpu::texel(logits, gpu::TexelFormat::F32x4)}, push, groups);
    else
        seq.dispatch(k, {logits, out}, push, groups);
}

}  // namespace medusa::kernels
