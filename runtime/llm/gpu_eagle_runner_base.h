// What EAGLE-1/2's and EAGLE-3's draft layers on the GPU share: the decoder layer (q|k|v over the
// layer's attention input, its own KV cache), a block's scratch and the output store, and runs as
// recorded command buffers, one submit each, by block size and variant. A run embeds the block's
// tokens with the target's table, builds the layer's input (the subclass's), runs the decoder
// layer, keeps its outputs in the store and applies a head (the subclass's).
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <utility>

#include "gpu/buffer.h"
#include "gpu/command_sequence.h"
#include "gpu/kernel.h"
#include "llm/decoder_layer.h"
#include "llm/eagle_layer.h"
#include "llm/eagle_runner.h"
#include "llm/gpu_model.h"

namespace medusa {

class GpuEagleRunnerBase : public EagleRunner {
public:
    static constexpr int kStoreRows = 4 * MAX_BLOCK_TOKENS;

    ~GpuEagleRunnerBase() override;
    int context() const override { return target_.config().seq_len; }
    void attach() override;
    void restart() override { rows_ = 0; }
    void run(const TokenBlock& block, std::span<const int> source) override;
    void prepare(int n_tokens) override;  // every variant's sequence
    int rows() const override { return rows_; }
    uint64_t submits() const override { return submits_; }

protected:
    // `attention_input`: the columns q|k|v read (the layer's attention_input()). `attach`: makes
    // the target keep this layer's features (GpuTreeRunner switches them).
    GpuEagleRunnerBase(GpuModel& target, const EagleLayer& layer, int attention_input, std::function<void()> attach);

    // What the decoder layer reads: x_ holds the residual h; `rows` (null: x_ itself) of `width`
    // floats are what q|k|v read.
    struct LayerInput {
        gpu::Buffer* rows = nullptr;
        uint32_t width = 0;
    };
    // Between the embedding (in emb_) and the decoder layer.
    virtual LayerInput record_input(gpu::CommandSequence& seq, int n_tokens, int variant) = 0;
    // After the outputs went to the store: the head over x_.
    virtual void record_head(gpu::CommandSequence& seq, int n_tokens) = 0;
    // A layer that records blocks differently by their sources: how many ways, and which one a
    // block's sources take (0 to variants() - 1).
    virtual int variants() const { return 1; }
    virtual int variant(std::span<const int> source) const {
        (void)source;
        return 0;
    }
    // After each run was submitted.
    virtual void ran(int n_tokens) { (void)n_tokens; }

    GpuModel& target_;
    DecoderShape shape_;
    int vocab_;
    std::unique_ptr<MatmulRecorder> matmuls_;
    std::unique_ptr<gpu::Buffer> params_, inputs_, emb_, x_, store_;
    int block_size_ = 0;  // of the last run

private:
    // The run of `n_tokens` of `variant`, recorded at first use.
    gpu::CommandSequence& sequence(int n_tokens, int variant);

    std::function<void()> attach_;
    uint64_t feature_version_ = 0;  // of the feature cache the sequences bind (recorded again once replaced)
    DecoderLayerWeights layer_;
    std::unique_ptr<KvCache> kv_;
    std::unique_ptr<DecoderLayerRecorder> recorder_;
    std::unique_ptr<gpu::Buffer> qkv_, att_out_, hb_, scores_;
    std::unique_ptr<gpu::Kernel> store_kernel_;
    std::map<std::pair<int, int>, std::unique_ptr<gpu::CommandSequence>> sequences_;  // by size, variant
    int rows_ = 0;
    uint64_t submits_ = 0;
};

}  // namespace medusa
