// The EAGLE layer's parameters as one flat vector: what the GPU trainer's parameter, gradient
// and AdamW moment buffers hold. q|k|v and gate|up are stacked (each is then one GEMM).
#pragma once
#include <cstddef>
#include <vector>

#include "llm/eagle_layer.h"

namespace medusa::train {

struct EagleFlatLayout {
    size_t fc_w, fc_b;  // (dim, 2 dim), (dim)
    size_t qkv;         // (dim + 2 kv_dim, dim): wq, wk, wv
    size_t wo;          // (dim, dim)
    size_t post_norm;   // (dim)
    size_t gate_up;     // (2 hidden, dim): w_gate, w_up
    size_t w_down;      // (dim, hidden)
    size_t total;
    explicit EagleFlatLayout(const EagleLayer& shape);
};

std::vector<float> pack_eagle_layer(const EagleLayer& layer);
// The parameters in `flat`, with the sizes and settings of `shape`.
EagleLayer unpack_eagle_layer(const std::vector<float>& flat, const EagleLayer& shape);

}  // namespace medusa::train
