// How many ranges attention_split.comp divides the keys of each (block token, head) into: the
// workgroups of a short block over a long cache are few (32 heads of a decoded token: 32), so
// each takes a range and the last of a pair's workgroups to finish joins them (flash-decoding).
#pragma once
#include <cstdint>
#include <optional>

namespace medusa {

// Enough workgroups for a large GPU (about 128 compute units), at most 16 ranges, each at least
// 256 of the context's slots when the cache is full, and the partial sums of every range within
// a (token, head)'s row of `ctx` floats. `wanted` (MEDUSA_ATTENTION_SPLITS) replaces the first
// three bounds, not the last.
uint32_t attention_splits(uint32_t n_heads, int n_tokens, uint32_t ctx, uint32_t head_dim,
                          std::optional<uint32_t> wanted = std::nullopt);

// MEDUSA_ATTENTION_SPLITS, to compare split counts on one device: a count from 1 to 64, or
// nullopt when unset. Throws std::invalid_argument naming the variable and its value when that
// reads otherwise.
std::optional<uint32_t> attention_splits_from_environment();

}  // namespace medusa
