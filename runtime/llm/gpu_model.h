// The transformer on the GPU: weights uploaded once, a KV cache per layer, and one recorded
// command buffer per block size that is replayed with a single submit per forward pass.
#pragma once
#include <map>
#include <memory>
#include <vector>

#include "gpu/buffer.h"
#include "gpu/command_sequence.h"
#include "gpu/context.h"
#include "gpu/kernel.h"
#include "llm/gpu_matrix.h"
#include "llm/language_model.h"

namespace medusa {

// Which shader layouts the forward uses (see prefers_cpu_layouts): the device's own choice, or
// either one forced, so tests check both against the CPU reference on any device.
enum class KernelLayouts { Auto, Gpu, Cpu };

struct GpuModelOptions {
    bool timestamps = false;  // per-stage GPU time (bench)
    int context = 0;          // 0: the model's own context length
    KernelLayouts layouts = KernelLayouts::Auto;
};

class GpuModel : public LanguageModel {
public:
    GpuModel(gpu::Context& ctx, const ModelFile& file, GpuModelOptions options = {});
    ~GpuModel() override;

    const LlamaConfig& config() const override { return cfg_; }
    void forward(const TokenBlock& block) override;
    std::span<const float> logits(int t) override;
    int argmax(int t) override;
    const char* engine_name() const override { return "vulkan"; }

    gpu::Context& context() { return ctx_; }

    // For strategies that put more work into the same submit (the Medusa step): records the
    // forward pass over the block described by the parameter buffer, without begin()/end().
    void record_forward(gpu::CommandSequence& seq, int n_tokens);
    // Writes a block into the parameter buffer (what forward() does before submitting).
    void write_params(const TokenBlock& block);
    // block_rows > 0 (with n_tokens 1): w stacks out_rows / block_rows matrices; block b reads
    // x row b and writes y row b (strides in floats; x_stride 0 gives every block the same input).
    void record_matmul(gpu::CommandSequence& seq, const GpuMatrix& w, gpu::BufferRef x, gpu::BufferRef y,
                       const gpu::Buffer* extra, uint32_t flags, int out_rows, int n_tokens, uint32_t x_stride,
                       uint32_t y_stride, int block_rows = 0);
    struct Buffers {
        gpu::Buffer &params, &hidden, &logits, &argmax, &key_cache, &value_cache;
    };
    Buffers buffers() { return {*params_, *hidden_, *logits_, *argmax_, *key_cache_, *value_cache_}; }
    const GpuMatrix& classifier() const { return classifier_; }
    // Marks the results of a forward recorded elsewhere as readable through logits()/argmax().
    void set_last_block_size(int n) { block_size_ = n; }
    // Final-norm hidden state of block token t of the last forward (what Medusa heads read).
    std::vector<float> hidden(int t) const;
    // Figures of the last forward pass, for `bench`.
    uint32_t dispatches_per_forward() const { return last_dispatches_; }
    // Counts forward() calls, so a strategy can tell whether the cache changed behind its back.
    uint64_t forward_count() const { return submits_; }
    uint64_t submits() const { return submits_; }
    std::vector<gpu::StageTime> stage_times() const;
    size_t weight_bytes() const { return weight_bytes_; }
    // Weight type per matrix role, e.g. {"wqkv": "q8", ...}, for `info`.
    std::string weight_variants() const;

private:
    struct Layer {
        std::unique_ptr<gpu::Buffer> attention_norm, ffn_norm;
        GpuMatrix wqkv, wo, w13, w2;
    };
    const gpu::Kernel& matmul_kernel(const std::string& variant, const std::vector<uint32_t>& spec);
    const gpu::Kernel& embed_kernel(const std::string& variant);

    gpu::Context& ctx_;
    LlamaConfig cfg_;
    GpuModelOptions options_;
    bool cpu_layouts_;  // matmul one lane per row, attention in one pass (see prefers_cpu_layouts)
    GpuMatrix embeddings_, classifier_;
    std::unique_ptr<gpu::Buffer> final_norm_;
    std::vector<Layer> layers_;
    std::unique_ptr<gpu::Buffer> key_cache_, value_cache_, params_, x_, qkv_, att_out_, hidden_, hb_, scores_, logits_, argmax_;
    std::map<std::string, std::unique_ptr<gpu::Kernel>> kernels_;
    std::map<int, std::unique_ptr<gpu::CommandSequence>> sequences_;  // by block size
    gpu::CommandSequence* last_ = nullptr;
    uint32_t last_dispatches_ = 0;
    uint64_t submits_ = 0;
    size_t weight_bytes_ = 0;
    int block_size_ = 0;
};

}  // namespace medusa
