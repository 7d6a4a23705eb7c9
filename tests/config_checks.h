// Checks shared by the loader and writer tests: two configurations describe the same shapes.
#pragma once
#include <catch2/catch.hpp>

#include "model/model_file.h"

namespace medusa::test {

inline void check_same_shapes(const LlamaConfig& a, const LlamaConfig& b) {
    CHECK(a.dim == b.dim);
    CHECK(a.hidden_dim == b.hidden_dim);
    CHECK(a.n_layers == b.n_layers);
    CHECK(a.n_heads == b.n_heads);
    CHECK(a.n_kv_heads == b.n_kv_heads);
    CHECK(a.vocab_size == b.vocab_size);
    CHECK(a.seq_len == b.seq_len);
}

}  // namespace medusa::test
