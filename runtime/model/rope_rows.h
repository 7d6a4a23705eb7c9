// The two orders in which q and k projections can pair their rows for RoPE: adjacent pairs
// (2i, 2i+1), llama2.c's and Meta's, which this engine runs, and rotate_half's (i, i + rotated/2),
// in which Hugging Face and llama.cpp's NeoX-style families store them. Only each head's first
// `rotated` rows take part (partial RoPE); the rest keep their places.
#pragma once
#include <cstdint>
#include <list>
#include <vector>

#include "model/model_file.h"

namespace medusa {

// Reorders the rows of a q or k projection {n_heads * head, ...} (or its bias, or a per-head
// gain with n_heads 1) between the two orders; `to_rotate_half` = true is Hugging Face's
// conversion of Meta's weights. `rotated` 0: the whole head.
std::vector<uint8_t> permute_rope_rows(const uint8_t* data, int64_t rows, size_t row_bytes, int n_heads,
                                       bool to_rotate_half, int64_t rotated = 0);

// The heads a canonical tensor's rows split into for RoPE's pairing: n_heads for wq and bq,
// n_kv_heads for wk and bk, 1 for the per-head gains q_norm and k_norm, 0 for tensors without.
int rope_row_heads(const LlamaConfig& c, const std::string& name);

// Puts every layer's wq, wk (and bq, bk, q_norm, k_norm) of a model stored in rotate_half order
// into adjacent-pair order; the reordered copies are kept in `owned`.
void reorder_rotate_half_rows(ModelFile& m, std::list<std::vector<uint8_t>>& owned);

}  // namespace medusa
