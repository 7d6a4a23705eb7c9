#include "llm/kv_cache.h"

#include <algorithm>
#include <stdexcept>

#include "layouts/kv_commit.h"
#include "llm/kernel_params.h"

namespace medusa {

int KvCache::ring_rows(int window, int context) {
    return window > 0 ? std::min(context, window + 2 * MAX_BLOCK_TOKENS) : context;
}

KvCache::KvCache(gpu::Context& ctx, int n_layers, int context, int kv_dim, int feature_dim, const std::vector<int>& windows)
    : ctx_(ctx), layers_(n_layers), context_(context), kv_dim_(kv_dim), feature_dim_(feature_dim) {
    size_t floats = 0;
    std::vector<uint32_t> table;  // kv_compact.comp's (first float, rows) per layer
    int reach = 0;
    for (int l = 0; l < n_layers; ++l) {
        const int window = size_t(l) < windows.size() ? windows[l] : 0;
        const int rows = ring_rows(window, context);
        if (rows < context) reach = reach == 0 ? rows - window : std::min(reach, rows - window);
        if (floats + size_t(rows) * kv_dim > UINT32_MAX)
            throw std::invalid_argument("a KV cache of more than 2^32 floats per buffer");
        offsets_.push_back(uint32_t(floats));
        rows_.push_back(uint32_t(rows));
        table.insert(table.end(), {uint32_t(floats), uint32_t(rows)});
        floats += size_t(rows) * kv_dim;
    }
    contents_.set_ring_reach(reach);
    const size_t bytes = floats * 4;
    keys_ = std::make_unique<gpu::Buffer>(ctx, bytes, gpu::MemoryKind::Device);
    values_ = std::make_unique<gpu::Buffer>(ctx, bytes, gpu::MemoryKind::Device);
    features_ = std::make_unique<gpu::Buffer>(ctx, std::max<size_t>(4, size_t(context) * feature_dim * 4),
                                              gpu::MemoryKind::Device);
    keys_->fill_zero();
    values_->fill_zero();
    features_->fill_zero();
    commit_ = std::make_unique<gpu::Buffer>(ctx, sizeof(layout::KvCommit), gpu::MemoryKind::Host);
    layout::KvCommit none{};
    none.kept = 1;
    commit_->upload(&none, sizeof none);
    layer_table_ = std::make_unique<gpu::Buffer>(ctx, table.size() * 4, gpu::MemoryKind::Device);
    layer_table_->upload(table.data(), table.size() * 4);
    compact_ = std::make_unique<gpu::Kernel>(ctx, gpu::Shader::kv_compact, 5, sizeof(kernels::KvCompactPush));
}

KvCache::~KvCache() = default;

void KvCache::set_feature_dim(int feature_dim) {
    if (settle_seq_) settle_seq_->wait();
    settle_seq_.reset();
    feature_dim_ = feature_dim;
    features_ = std::make_unique<gpu::Buffer>(ctx_, std::max<size_t>(4, size_t(context_) * feature_dim * 4),
                                              gpu::MemoryKind::Device);
    features_->fill_zero();
    contents_.wrote(0, {}, true);
    ++feature_version_;
}

void KvCache::keep_path(int base, std::span<const int> path, std::span<const int> tokens) {
    if (path.empty() || path[0] != 0 || path.size() != tokens.size() || path.size() > MAX_BLOCK_TOKENS)
        throw std::invalid_argument("an accepted path starts at the root and has one token per node");
    if (base < 0 || base + int(path.back()) >= context_)
        throw std::invalid_argument("an accepted path outside the cache");
    for (size_t d = 1; d < path.size(); ++d)
        if (path[d] <= path[d - 1]) throw std::invalid_argument("an accepted path's nodes must increase");
    settle();  // never drop a move not yet made
    layout::KvCommit c{};
    c.kept = uint32_t(path.size());
    c.old_base = uint32_t(base);
    for (size_t d = 0; d < path.size(); ++d) c.path[d] = uint32_t(path[d]);
    commit_->upload(&c, sizeof c);
    // A path along the block's own order (a chain, a lone root) is already in place.
    pending_ = path.back() != int(path.size()) - 1;
    wrote(base, tokens, true);
}

bool KvCache::take_move() {
    const bool pending = pending_;
    pending_ = false;
    return pending;
}

void KvCache::record_move(gpu::CommandSequence& seq) {
    seq.stage("commit");
    seq.dispatch_over(*compact_, {*commit_, *keys_, *values_, *features_, *layer_table_},
                      kernels::KvCompactPush{uint32_t(layers_), uint32_t(kv_dim_), uint32_t(context_), uint32_t(feature_dim_)},
                      uint32_t(layers_ * kv_dim_ + feature_dim_));
}

void KvCache::settle() {
    if (!take_move()) return;
    if (!settle_seq_) {
        settle_seq_ = std::make_unique<gpu::CommandSequence>(ctx_);
        settle_seq_->begin();
        record_move(*settle_seq_);
        settle_seq_->end();
    }
    settle_seq_->run();
}

}  // namespace medusa
