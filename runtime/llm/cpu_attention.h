// Attention of one block token over a key/value cache on the CPU: what the reference model and the
// CPU EAGLE layer both run.
#pragma once
#include <span>

#include "llm/token_block.h"

namespace medusa {

struct AttentionHeads {
    int n_heads = 0, n_kv_heads = 0, head_dim = 0;
    int kv_dim() const { return n_kv_heads * head_dim; }
};

// For every head h of block token t: softmax(q_h . k_s / sqrt(head_dim)) over the cache slots s that t
// sees (block.sees_slot: causal or tree-masked), and the values weighted by it. q holds the token's
// n_heads * head_dim queries, out as many floats; keys and values hold kv_dim floats a slot, slots
// up to block.base + block.size(). Query heads share key/value heads in groups (n_heads / n_kv_heads).
void cpu_attention(std::span<float> out, std::span<const float> q, std::span<const float> keys,
                   std::span<const float> values, const TokenBlock& block, int t, const AttentionHeads& shape);

}  // namespace medusa
