// Files that store a layer's q|k|v projections, or its FFN's gate|up, as one matrix (Phi-3's
// attn_qkv and ffn_up, Hugging Face's qkv_proj and gate_up_proj): split at load into the
// canonical separate matrices as views of the stacked rows, so every engine sees one layout.
#pragma once
#include "model/model_file.h"

namespace medusa {

// Canonical names of the fused tensors a loader may produce, per layer N:
//   layers.N.wqkv {q_dim + 2 kv_dim, dim}: q, then k, then v rows
//   layers.N.w13  {2 hidden, dim}: the gate (w1) rows, then the up (w3) rows
// Replaces each by its parts; throws FormatError naming the file and the tensor when its rows
// do not add up to what the configuration implies, or when a part is also stored on its own.
void split_fused_tensors(ModelFile& m);

}  // namespace medusa
