// The keys and values of every layer for every cache slot (a local layer's for the slots of its
// window and the blocks past it, as a ring), the target's final-norm hidden state
// (its feature) of each slot, what the slots hold (the prefix of slots whose entries are final,
// with their tokens, so a new prompt reuses what it shares with the last one), and the
// move that puts an accepted tree path in consecutive slots.
#pragma once
#include <memory>
#include <span>
#include <vector>

#include "gpu/buffer.h"
#include "gpu/command_sequence.h"
#include "gpu/kernel.h"
#include "llm/cache_contents.h"

namespace medusa {

class KvCache;

// Waits for and drops `sequences` (a map of recorded command sequences that bind `kv`'s feature
// cache) when that cache was replaced since `version`, which then becomes the current one.
template <class Map>
void drop_if_features_replaced(Map& sequences, uint64_t& version, const KvCache& kv);

class KvCache {
public:
    // feature_dim 0: no feature cache (a draft layer's own cache). windows: per layer, a local
    // layer's sliding window (0 or absent: the layer keeps every slot).
    KvCache(gpu::Context& ctx, int n_layers, int context, int kv_dim, int feature_dim = 0,
            const std::vector<int>& windows = {});
    // Slots a layer with this window keeps: the window and the two blocks (drafting window and
    // verify block) that may lie past it, or the whole context when that is not less.
    static int ring_rows(int window, int context);
    ~KvCache();

    int context() const { return context_; }
    gpu::Buffer& keys() { return *keys_; }      // per layer (its rows, kv_dim) floats, from layer_offset
    gpu::Buffer& values() { return *values_; }  // the same
    gpu::Buffer& features() { return *features_; }  // (context, feature_dim) floats; 4 bytes without
    int feature_dim() const { return feature_dim_; }
    // Another feature (EAGLE-3's fused layers, or back to the final-norm state; the width may be
    // the same): a new, zeroed feature cache, and no slot holds final entries any more. Sequences
    // recorded with the old buffer must be recorded again: feature_version() tells them.
    void set_feature_dim(int feature_dim);
    uint64_t feature_version() const { return feature_version_; }
    uint32_t layer_offset(int layer) const { return offsets_.at(size_t(layer)); }  // floats
    // Slots layer `layer` keeps: slot s lives in row s % layer_rows(layer).
    uint32_t layer_rows(int layer) const { return rows_.at(size_t(layer)); }
    // Of a prefix of `shared` valid tokens, what a new prompt may keep (see CacheContents::reusable).
    int reusable(int shared) const { return contents_.reusable(shared); }

    // Slots [0, n) hold the final entries of these tokens.
    std::span<const int> valid_tokens() const { return contents_.valid_tokens(); }
    // Bookkeeping after a forward (see CacheContents).
    void wrote(int base, std::span<const int> tokens, bool causal) { contents_.wrote(base, tokens, causal); }

    // Keeps the accepted path of the tree verified at slot `base` (block indices, root first,
    // increasing) at slots base, base+1, ...; `tokens` are the path's tokens. Moving the path's
    // entries is left to the next submit that reads the cache: a verify pass carries it
    // (take_move), anyone else settles it first (settle).
    void keep_path(int base, std::span<const int> path, std::span<const int> tokens);
    // Hands the move keep_path left to the caller, whose next submit must hold record_move's
    // dispatch (a replayed sequence that recorded it): false when nothing is left to move.
    bool take_move();
    // Records the last kept path's move (reading commit()) into a sequence.
    void record_move(gpu::CommandSequence& seq);
    // Runs a move nobody took, in a submit of its own; nothing when none is left.
    void settle();
    // The last kept path (layouts/kv_commit.h), also read by the hidden-state hand-over.
    const gpu::Buffer& commit() const { return *commit_; }

private:
    gpu::Context& ctx_;
    int layers_, context_, kv_dim_, feature_dim_;
    uint64_t feature_version_ = 0;
    std::vector<uint32_t> offsets_, rows_;
    std::unique_ptr<gpu::Buffer> keys_, values_, features_, commit_, layer_table_;
    std::unique_ptr<gpu::Kernel> compact_;
    std::unique_ptr<gpu::CommandSequence> settle_seq_;
    CacheContents contents_;
    bool pending_ = false;  // keep_path left a move to make
};

template <class Map>
void drop_if_features_replaced(Map& sequences, uint64_t& version, const KvCache& kv) {
    if (kv.feature_version() == version) return;
    for (auto& entry : sequences) entry.second->wait();
    sequences.clear();
    version = kv.feature_version();
}

}  // namespace medusa
