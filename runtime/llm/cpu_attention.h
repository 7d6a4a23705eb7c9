// Attention of one block token over a key/value cache on the CPU: what the reference model and the
// CPU EAGLE layer both run.
#pragma once
#include <span>

#include "llm/token_block.h"

namespace medusa {

struct AttentionHeads {
    int n_heads = 0, n_kv_heads = 0, head_dim = 0;
    float scale = 0.0f;  // of q.k; 0: 1 / sqrt(head_dim)
    int window = 0;      // a sliding window: keys at positions p - window and before are not seen; 0: none
    int kv_dim() const { return n_kv_heads * head_dim; }
};

// Whether block token t sees cache slot s under a sliding window of `window` positions: a cached
// slot s < block.base holds position s, a block token its own position.
bool within_window(const TokenBlock& block, int t, int s, int window);

// For every head h of block token t: softmax(scale q_h . k_s) over the cache slots s that t sees
// (block.sees_slot: causal or tree-masked, and within the window), and the values weighted by it. q holds the token's
// n_heads * head_dim queries, out as many floats; keys and values hold kv_dim floats a slot, slots
// up to block.base + block.size(). Query heads share key/value heads in groups (n_heads / n_kv_heads).
void cpu_attention(std::span<float> out, std::span<const float> q, std::span<const float> keys,
                   std::span<const float> values, const TokenBlock& block, int t, const AttentionHeads& shape);

}  // namespace medusa
