#include "llm/model_memory.h"

#include "gpu/device_limits.h"
#include "layouts/block_params.h"
#include "layouts/kv_commit.h"
#include "llm/gpu_matrix.h"
#include "llm/kv_cache.h"

namespace medusa {

namespace {

using gpu::format_bytes;

// A stack of tensors uploaded as one GpuMatrix: a buffer per segment's words (and q8 scales).
void add_matrix(ModelMemory& m, const std::string& name, const std::vector<const Tensor*>& parts) {
    for (const SegmentBytes& s : planned_segments(parts)) {
        m.buffers.push_back({name, s.words, 0});
        m.buffers.push_back({name + " scales", s.scales, 0});
        m.weights += s.words + s.scales;
    }
}

void add_vector(ModelMemory& m, const std::string& name, uint64_t floats) {
    m.buffers.push_back({name, floats * 4, 0});
    m.weights += floats * 4;
}

// The largest context whose per-position bytes fit beside `fixed` in `budget` (0: none), in
// whole 256s when that large: a round number, and room for the buffers' alignment padding.
uint64_t largest_context(uint64_t budget, uint64_t fixed, uint64_t per_position) {
    const uint64_t n = budget > fixed && per_position ? (budget - fixed) / per_position : 0;
    return n >= 256 ? n / 256 * 256 : n;
}

std::string ctx_advice(uint64_t positions) {
    return positions > 0 ? ": use --ctx-size " + std::to_string(positions) + " or less" : "";
}

}  // namespace

ModelMemory plan_model_memory(const ModelFile& file, int context, bool device_copies) {
    const LlamaConfig& c = file.config;
    ModelMemory m;
    m.context = context;
    m.weight_type = c.n_layers > 0 ? dtype_name(file.get("layers.0.w1").type) : "";
    add_matrix(m, "tok_embeddings", {&file.get("tok_embeddings")});
    add_matrix(m, "the classifier", {&file.classifier()});
    add_vector(m, "norm", c.dim);
    add_vector(m, "rope factors", rotated_dims(c) / 2);
    for (int l = 0; l < c.n_layers; ++l) {
        const std::string p = "layers." + std::to_string(l) + ".";
        add_vector(m, p + "attention_norm", c.dim);
        add_vector(m, p + "ffn_norm", c.dim);
        add_matrix(m, p + "wq|wk|wv", {&file.get(p + "wq"), &file.get(p + "wk"), &file.get(p + "wv")});
        add_matrix(m, p + "wo", {&file.get(p + "wo")});
        add_matrix(m, p + "w1|w3", {&file.get(p + "w1"), &file.get(p + "w3")});
        add_matrix(m, p + "w2", {&file.get(p + "w2")});
        if (c.qkv_bias) add_vector(m, p + "q|k|v biases", c.q_dim() + 2 * c.kv_dim());
        if (c.arch.qk_norm) add_vector(m, p + "q|k norms", 2 * c.head_dim());
        if (c.arch.post_norms) add_vector(m, p + "post-norms", 2 * c.dim);
    }

    const uint64_t ctx = uint64_t(context), kv = uint64_t(c.kv_dim());
    // Global layers keep every position; a local layer's ring only its window and two blocks.
    uint64_t global_layers = 0, ring_rows = 0;
    for (int l = 0; l < c.n_layers; ++l) {
        const uint64_t rows = uint64_t(KvCache::ring_rows(layer_attention(c, l).window, context));
        if (rows == ctx) ++global_layers;
        else ring_rows += rows;
    }
    const std::string shape = std::to_string(global_layers) + " layers x " + std::to_string(context) + " positions" +
                              (ring_rows ? " and " + std::to_string(c.n_layers - int(global_layers)) + " local layers' " +
                                               std::to_string(ring_rows) + " ring slots" : "");
    const uint64_t kv_position = global_layers * kv * 4, feature_position = uint64_t(c.dim) * 4;
    const uint64_t kv_bytes = ctx * kv_position + ring_rows * kv * 4;
    m.buffers.push_back({"the KV cache's keys (" + shape + ")", kv_bytes, kv_position});
    m.buffers.push_back({"the KV cache's values (" + shape + ")", kv_bytes, kv_position});
    m.buffers.push_back({"the cached features (" + std::to_string(context) + " positions)", ctx * feature_position,
                         feature_position});
    m.kv_cache = 2 * kv_bytes;
    m.cache = 2 * kv_bytes + ctx * feature_position;

    const uint64_t T = MAX_BLOCK_TOKENS, scores_position = T * uint64_t(c.n_heads) * 4;
    std::vector<PlannedBuffer> acts = {
        {"the block's inputs", T * c.dim * 4, 0},
        {"the block's q|k|v", T * (c.q_dim() + 2 * kv) * 4, 0},
        {"the block's attention outputs", T * c.q_dim() * 4, 0},
        {"the block's hidden states", T * c.dim * 4, 0},
        {"the block's FFN activations", T * c.hidden_dim * 4, 0},
        {"the attention scores (" + std::to_string(T) + " tokens x " + std::to_string(c.n_heads) + " heads x " +
             std::to_string(context) + " positions)",
         ctx * scores_position, scores_position},
        {"the block's logits (" + std::to_string(T) + " tokens x " + std::to_string(c.vocab_size) + ")",
         T * c.vocab_size * 4, 0},
        {"the block's argmax", T * 4, 0},
        {"the block's parameters", sizeof(layout::BlockParams), 0},
        {"the KV cache's commit", sizeof(layout::KvCommit), 0},
    };
    if (device_copies) {
        acts.push_back({"the block's logits in device memory", T * c.vocab_size * 4, 0});
        acts.push_back({"the block's parameters in device memory", sizeof(layout::BlockParams), 0});
    }
    for (const PlannedBuffer& b : acts) m.activations += b.bytes;
    m.buffers.insert(m.buffers.end(), acts.begin(), acts.end());
    m.per_position = 2 * kv_position + feature_position + scores_position;
    return m;
}

void check_fits_device(const ModelMemory& plan, const gpu::Context& ctx, const std::string& model) {
    const gpu::DeviceLimits& l = ctx.limits();
    const std::string device = ctx.info().name;
    // Another model (a draft, bench's earlier one) may already hold part of the heap.
    const uint64_t in_use = ctx.live_bytes(), budget = l.heap_bytes > in_use ? l.heap_bytes - in_use : 0;
    const std::string heap = in_use ? "only " + format_bytes(budget) + " of " + device + "'s largest heap (" +
                                          format_bytes(l.heap_bytes) + ") is free"
                                    : device + "'s largest heap holds " + format_bytes(l.heap_bytes);
    const std::string weights = plan.weight_type.empty() ? "weights" : plan.weight_type + " weights";
    if (plan.weights > budget)
        throw gpu::DeviceLimitError(model + ": its " + weights + " need " + format_bytes(plan.weights) + " but " + heap);
    if (plan.total() > budget) {
        const uint64_t fixed = plan.total() - uint64_t(plan.context) * plan.per_position;
        throw gpu::DeviceLimitError(
            model + ": the KV cache for " + std::to_string(plan.context) + " positions needs " +
            format_bytes(plan.cache) + " and the activations " + format_bytes(plan.activations) + " beside " +
            format_bytes(plan.weights) + " of " + weights + ", " + format_bytes(plan.total()) + " in all, but " + heap +
            ctx_advice(largest_context(budget, fixed, plan.per_position)));
    }
    for (const PlannedBuffer& b : plan.buffers) {
        const bool binding = b.bytes > l.storage_range;
        if (!binding && b.bytes <= l.max_allocation) continue;
        const uint64_t limit = binding ? l.storage_range : l.max_allocation;
        const uint64_t fixed = b.bytes - uint64_t(plan.context) * b.per_position;
        throw gpu::DeviceLimitError(model + ": " + b.name + " takes " + format_bytes(b.bytes) + ", past " + device +
                                    "'s " + (binding ? "maxStorageBufferRange" : "maxMemoryAllocationSize") + " of " +
                                    format_bytes(limit) + ctx_advice(largest_context(limit, fixed, b.per_position)));
    }
}

}  // namespace medusa
