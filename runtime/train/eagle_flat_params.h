// The EAGLE layer's parameters as one flat vector: what the GPU trainers' parameter, gradient
// and AdamW moment buffers hold. q|k|v and gate|up are stacked (each is then one GEMM). An
// EAGLE-1/2 layer has fc's bias and no norms or draft head; an EAGLE-3 layer the reverse (and fc
// only when it fuses several layers): absent tensors take no room.
#pragma once
#include <cstddef>
#include <vector>

#include "llm/eagle_layer.h"

namespace medusa::train {

struct EagleFlatLayout {
    size_t fc_w, fc_b;  // (dim, 2 dim) and (dim); EAGLE-3: (dim, feature_dim) or nothing, and nothing
    size_t qkv;         // (dim + 2 kv_dim, attention_input): wq, wk, wv
    size_t wo;          // (dim, dim)
    size_t post_norm;   // (dim)
    size_t gate_up;     // (2 hidden, dim): w_gate, w_up
    size_t w_down;      // (dim, hidden)
    size_t input_norm, hidden_norm, final_norm;  // (dim) each, EAGLE-3 only
    size_t draft_head;  // (draft vocabulary, dim), EAGLE-3 only
    size_t total;
    explicit EagleFlatLayout(const EagleLayer& shape);
};

std::vector<float> pack_eagle_layer(const EagleLayer& layer);
// The parameters in `flat`, with the sizes and settings of `shape`.
EagleLayer unpack_eagle_layer(const std::vector<float>& flat, const EagleLayer& shape);

}  // namespace medusa::train
