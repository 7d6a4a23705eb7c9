// The transformer on the GPU: weights uploaded once, a KV cache, and one recorded command
// buffer per block size that is replayed with a single submit per forward pass. Other llm
// objects (the tree runner, the Medusa heads, the EAGLE runner) record into their own command
// buffers through the "recording" members below. One buffer is read outside runtime/llm:
// runtime/train/self_distill.cpp downloads hidden_states() after each forward, the final-norm
// rows of a whole block at once, as the inputs the Medusa heads are trained on.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "gpu/buffer.h"
#include "gpu/command_sequence.h"
#include "gpu/context.h"
#include "gpu/kernel.h"
#include "llm/decoder_layer.h"
#include "llm/gpu_matrix.h"
#include "llm/kv_cache.h"
#include "llm/language_model.h"
#include "llm/matmul_recorder.h"

namespace medusa {

// Which shader layouts the forward uses (see prefers_cpu_layouts): the device's own choice, or
// either one forced, so tests check both against the CPU reference on any device.
enum class KernelLayouts { Auto, Gpu, Cpu };

// How the forward's kernels reach the buffers the host writes (the block's parameters) and reads
// (the logits) every step: directly in host memory (UMA and CPU drivers, where host memory is the
// device's), or through copies in device memory (discrete GPUs): the parameters copied in at the
// start of each forward, the logits copied out at its end. Otherwise every layer's RoPE and
// attention kernels waited on the bus for their first read of the parameters, and argmax read
// each row of logits across it.
enum class HostBufferAccess { Auto, Direct, DeviceCopies };
// MEDUSA_HOST_BUFFERS, to compare the two on one device: "direct" or "copies"; nullopt when unset.
// Throws std::invalid_argument naming the variable and its value when that reads otherwise.
std::optional<HostBufferAccess> host_buffers_from_environment();
// Whether `access` means copies on this device (Auto: as MEDUSA_HOST_BUFFERS says, else where host
// memory is not device-local).
bool uses_device_copies(gpu::Context& ctx, HostBufferAccess access);

struct GpuModelOptions {
    bool timestamps = false;  // per-stage GPU time (bench)
    // Positions of the KV cache: 0, the model's trained context length; more than that is the
    // caller's choice (RoPE past the trained positions degrades the text; the CLI warns).
    int context = 0;
    KernelLayouts layouts = KernelLayouts::Auto;
    // The matrix kernels' configuration; unset: the entry kernel_tuning_path() holds for this
    // device and model (`bench --tune-kernels`), else default_matmul_config, either tiling as
    // MEDUSA_TILED_MATMUL says where it is set (tiling_from_environment).
    std::optional<MatmulConfig> matmul;
    HostBufferAccess host_buffers = HostBufferAccess::Auto;
};

class GpuModel : public LanguageModel {
public:
    // Throws gpu::DeviceLimitError before uploading anything when the model does not fit the device.
    GpuModel(gpu::Context& ctx, const ModelFile& file, GpuModelOptions options = {});
    ~GpuModel() override;

    const LlamaConfig& config() const override { return cfg_; }
    void forward(const TokenBlock& block) override;
    void prepare(int n_tokens) override;
    std::span<const float> logits(int t) override;
    int argmax(int t) override;
    const char* engine_name() const override { return "vulkan"; }

    gpu::Context& context() { return ctx_; }
    const GpuModelOptions& options() const { return options_; }
    // Final-norm hidden state of block token t of the last forward (what Medusa heads read).
    std::vector<float> hidden(int t) const;
    // Figures of the last forward pass, for `bench`.
    uint32_t dispatches_per_forward() const { return last_dispatches_; }
    // The barriers between them (CommandSequence places one only where data needs it).
    uint32_t barriers_per_forward() const { return last_barriers_; }
    uint64_t submits() const { return submits_; }
    // Forward passes over these weights, this model's own and those recorded elsewhere: a
    // caller that keeps results of a forward (hidden rows) can tell whether they were overwritten.
    uint64_t forward_count() const { return forwards_; }
    std::vector<gpu::StageTime> stage_times() const;
    size_t weight_bytes() const { return weight_bytes_; }
    // Weight type per matrix role, e.g. "embeddings q8, wqkv q8, ...", for `info`.
    std::string weight_variants() const;

    // Recording (runtime/llm, but for hidden_states() as above and matmuls(), whose configuration
    // `bench` reports and tunes). The forward over the block in block_params(): embeddings,
    // layers, final norm, classifier and argmax of every block token.
    void record_forward(gpu::CommandSequence& seq, int n_tokens);
    // The embeddings of the block in `params` (its tokens) into `out`, (tokens, dim) floats.
    void record_embed(gpu::CommandSequence& seq, gpu::Buffer& params, gpu::Buffer& out, int n_tokens);
    void write_block(const TokenBlock& block);        // into block_params()
    // Bookkeeping after a submit that ran record_forward: results readable, cache contents noted.
    void finished_forward(const TokenBlock& block, const gpu::CommandSequence& seq);
    gpu::Buffer& block_params() { return *params_; }  // layouts/block_params.h, in host memory
    const gpu::Buffer& hidden_states() const { return *hidden_; }  // (block token, dim), final norm
    // (block token, vocab) where the forward's kernels write them: logits() reads a host copy of it
    // where the model uses device copies (HostBufferAccess).
    const gpu::Buffer& logits_buffer() const { return forward_logits(); }
    KvCache& kv_cache() { return *kv_; }
    MatmulRecorder& matmuls() { return *matmuls_; }
    // Switches the matrix kernels' configuration (the kernel tuner); the forward passes are
    // recorded again on next use. Where it came from: "tuned", "default" or "given".
    void set_matmul_config(const MatmulConfig& config);
    const std::string& matmul_config_source() const { return matmul_source_; }
    const GpuMatrix& classifier() const { return classifier_; }
    // From now on the feature cache holds, per slot, the residual stream entering these layers
    // side by side (EAGLE-3's) instead of the final-norm hidden state; empty: back to that. The
    // forward passes are recorded again on next use; other sequences that recorded a forward or
    // bound the feature cache must be recorded again too (GpuTreeRunner does so for its own).
    void capture_layer_inputs(std::vector<int> layers);
    const std::vector<int>& captured_layers() const { return feature_layers_; }

private:
    gpu::CommandSequence& forward_sequence(int n_tokens);  // recorded at first use
    void drop_recorded_forwards();  // after a change they recorded (waits for them first)
    const gpu::Kernel& embed_kernel(MatrixVariant variant);

    gpu::Context& ctx_;
    LlamaConfig cfg_;
    GpuModelOptions options_;
    bool cpu_layouts_;  // matmul one lane per row, attention in one pass (see prefers_cpu_layouts)
    GpuMatrix embeddings_, classifier_;
    std::unique_ptr<gpu::Buffer> final_norm_;
    std::vector<DecoderLayerWeights> layers_;
    std::unique_ptr<KvCache> kv_;
    std::unique_ptr<MatmulRecorder> matmuls_;
    std::unique_ptr<DecoderLayerRecorder> layer_recorder_;
    // Activations of one block: x (T, dim), qkv (T, dim + 2 kv_dim), att_out (T, dim), hidden
    // (T, dim), hb (T, hidden_dim), scores (T, heads, ctx); logits (T, vocab) and argmax (T) on the host.
    std::unique_ptr<gpu::Buffer> params_, x_, qkv_, att_out_, hidden_, hb_, scores_, logits_, argmax_;
    // params_ and logits_ in device memory, which the kernels use (HostBufferAccess); null: none.
    std::unique_ptr<gpu::Buffer> device_params_, device_logits_;
    gpu::Buffer& forward_params() { return device_params_ ? *device_params_ : *params_; }
    const gpu::Buffer& forward_logits() const { return device_logits_ ? *device_logits_ : *logits_; }
    std::unique_ptr<gpu::Kernel> rmsnorm_, argmax_kernel_, feature_store_;
    uint32_t argmax_width_ = 0;  // logit_row_width: lanes per row, 0 for a subgroup a row
    std::vector<int> feature_layers_;  // see capture_layer_inputs
    std::map<MatrixVariant, std::unique_ptr<gpu::Kernel>> embed_kernels_;
    std::map<int, std::unique_ptr<gpu::CommandSequence>> sequences_;  // by block size
    const gpu::CommandSequence* last_ = nullptr;
    uint32_t last_dispatches_ = 0, last_barriers_ = 0;
    uint64_t submits_ = 0, forwards_ = 0;
    size_t weight_bytes_ = 0;
    int block_size_ = 0;
    std::string matmul_source_;
};

}  // namespace medusa
