#version 450
#include "layouts/push_constants.h"
#include "layouts/kv_commit.h"
// Moves the K/V rows of the last verified tree's accepted path to consecutive cache slots in
// every layer, and the rows of the feature cache alike: node path[d] (slot old_base + path[d])
// goes to slot old_base + d. path[d] >= d and each invocation walks the path in order, so no row
// is overwritten before it is read. A layer's cache may hold fewer slots than the context (a
// local layer's ring, slot s in row s % rows): the table says where each starts and its rows.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Commit { KvCommit C; };
layout(std430, binding = 1) buffer KCache { float kc[]; };  // [layer][ctx][kv_dim]
layout(std430, binding = 2) buffer VCache { float vc[]; };
layout(std430, binding = 3) buffer Features { float F[]; };  // [ctx][feature_dim]
layout(std430, binding = 4) readonly buffer Layers { uvec2 layer_rows[]; };  // per layer: first float, rows
layout(push_constant) uniform PushBlock { KvCompactPush p; };

void main() {
    const uint id = gl_GlobalInvocationID.x;
    const uint kv_columns = p.n_layers * p.kv_dim;
    if (id >= kv_columns) {
        const uint j = id - kv_columns;
        if (j >= p.feature_dim) return;
        for (uint d = 1; d < C.kept; ++d)
            F[(C.old_base + d) * p.feature_dim + j] = F[(C.old_base + C.path[d]) * p.feature_dim + j];
        return;
    }
    const uint layer = id / p.kv_dim, j = id % p.kv_dim;
    const uint off = layer_rows[layer].x + j, rows = layer_rows[layer].y;
    for (uint d = 1; d < C.kept; ++d) {
        const uint src = off + ((C.old_base + C.path[d]) % rows) * p.kv_dim;
        const uint dst = off + ((C.old_base + d) % rows) * p.kv_dim;
        kc[dst] = kc[src];
        vc[dst] = vc[src];
    }
}
