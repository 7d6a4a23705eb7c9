// Records matrix products y = W x for any weight type into a command sequence, with the
// pipelines (one per weight variant, geometry and set of fusions) built once per recorder. The
// model's layers, its classifier and the Medusa heads all record through one of these.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpu/buffer.h"
#include "gpu/command_sequence.h"
#include "gpu/kernel.h"
#include "llm/gpu_matrix.h"
#include "llm/matmul_tiles.h"

namespace medusa {

// kMatmulRope: the qkv matmul also adds the q/k/v biases, rotates q and k by each token's position
// and writes k and v into the layer's cache (rope_kv.comp's work), q staying in y.
struct MatmulRope {
    const gpu::Buffer* keys = nullptr;
    const gpu::Buffer* values = nullptr;
    const gpu::Buffer* params = nullptr;  // the block (layout::BlockParams): positions and slots
    const gpu::Buffer* bias = nullptr;    // q|k|v biases (zeros where the model has none)
    const gpu::Buffer* factors = nullptr;  // per rotated pair of a head (ones where the model has none)
    uint32_t q_dim = 0, kv_dim = 0, head_dim = 0, cache_offset = 0;
    uint32_t rotated = 0;     // leading dimensions of a head that rotate; 0: all
    uint32_t cache_rows = 0;  // slots the layer's cache holds (slot s in row s % cache_rows)
    float theta = 10000.0f, position_scale = 1.0f, attn_factor = 1.0f;
};

struct MatmulCall {
    const GpuMatrix* w = nullptr;
    const gpu::Buffer* x = nullptr;  // inputs, one row of x_stride floats per token (or block)
    const gpu::Buffer* y = nullptr;  // outputs, one row of y_stride floats per token (or block)
    const gpu::Buffer* extra = nullptr;  // norm gains (kMatmulNorm) or biases (kMatmulResblock)
    uint32_t flags = 0;                  // kMatmul* fusions (llm/kernel_params.h)
    int out_rows = 0;
    int tokens = 1;
    uint32_t x_stride = 0, y_stride = 0;  // floats; x_stride 0 gives every row block the same input
    // > 0 (one token only): w stacks out_rows / block_rows matrices and block b reads x row b
    // and writes y row b (the Medusa heads' stacked layers).
    int block_rows = 0;
    const MatmulRope* rope = nullptr;  // with kMatmulRope
};

// The matrix kernels' choices that are measured per device and model (`bench --tune-kernels`,
// llm/kernel_tuning.h) rather than guessed.
struct MatmulConfig {
    // Weights, inputs and gains read through texel views (weights.glsl's TEXEL variants), where
    // the device's views can span them; storage-buffer loads otherwise.
    bool texel = false;
    uint32_t workgroup = 64;  // invocations per workgroup (a multiple of the subgroup size)
    // Output rows per subgroup in the subgroup-per-row layout (GPUs; 1 to kMatmulMaxRows): each
    // input load serves them all. The lane-per-row layout ignores it.
    uint32_t rows = 1;
    // Blocks of tiled_from tokens or more (0: none) run through the tiled matrix-matrix kernel
    // (llm/matmul_tiles.h) in tiles of this shape, which reread each weight once per tile of
    // tokens instead of once per 8.
    uint32_t tiled_from = 0;
    MatmulTile tile;
    // In the subgroup-per-row layout, each lane reads four weight words (16 bytes) a step instead
    // of one. The lane-per-row layout ignores it.
    bool quads = false;
    std::string name() const {
        return std::string(texel ? "texel" : "storage") + "/" + std::to_string(workgroup) +
               (rows > 1 ? "/r" + std::to_string(rows) : "") + (quads ? "/quads" : "") +
               (tiled_from > 0 ? "/t" + tile.name() + "@" + std::to_string(tiled_from) : "");
    }
    bool operator==(const MatmulConfig&) const = default;
};

class MatmulRecorder {
public:
    // cpu_layouts: one lane per output row (CPU drivers), else coalesced rows per subgroup.
    MatmulRecorder(gpu::Context& ctx, bool cpu_layouts, float rms_eps, MatmulConfig config = {});
    void record(gpu::CommandSequence& seq, const MatmulCall& call);
    // Whether `call` can take kMatmulRope: not through the tiled kernel, and in the lane-per-row
    // layout read through texel views.
    bool fuses_rope(const MatmulCall& call) const;
    // Whether `call` runs through the tiled kernel: config().tiled_from tokens or more, and
    // fusions it has (not row blocks, the ResBlock's or RoPE).
    bool tiled(const MatmulCall& call) const;
    bool cpu_layouts() const { return cpu_layouts_; }
    const MatmulConfig& config() const { return config_; }
    // Applies to what is recorded from now on; recorded sequences keep their pipelines.
    // Throws std::invalid_argument when its tile does not fit the device.
    void set_config(const MatmulConfig& config);
    // Dispatches recorded with the TEXEL variants (a configuration that asks for them gets
    // storage loads where a buffer is too large for a view).
    uint64_t texel_dispatches() const { return texel_dispatches_; }
    // Dispatches recorded with the tiled kernel.
    uint64_t tiled_dispatches() const { return tiled_dispatches_; }

private:
    const gpu::Kernel& kernel(gpu::Shader shader, const std::vector<gpu::BindingKind>& bindings,
                              const std::vector<uint32_t>& spec);
    bool texel_reads(const GpuMatrix::Segment& s, const gpu::Buffer& x) const;
    gpu::Context& ctx_;
    bool cpu_layouts_;
    MatmulConfig config_;
    uint64_t texel_dispatches_ = 0, tiled_dispatches_ = 0;
    float rms_eps_;
    std::unique_ptr<gpu::Buffer> no_extra_;  // bound when a call has no gains or biases
    std::map<std::pair<gpu::Shader, std::vector<uint32_t>>, std::unique_ptr<gpu::Kernel>> kernels_;  // by spec constants
};

}  // namespace medusa
