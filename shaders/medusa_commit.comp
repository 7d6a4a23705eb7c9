#version 450
// After acceptance: moves the accepted nodes' K/V rows of every layer to consecutive cache
// slots after the prefix, and hands the last accepted node's hidden state to the heads.
// Each invocation walks the path in order; node index >= depth, so no row is overwritten
// before it has been read.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer State { uint state[]; };
layout(std430, binding = 1) buffer KCache { float kc[]; };
layout(std430, binding = 2) buffer VCache { float vc[]; };
layout(std430, binding = 3) readonly buffer Hidden { float hidden[]; };
layout(std430, binding = 4) writeonly buffer HeadInput { float head_in[]; };
layout(push_constant) uniform Push {
    uint n_layers;
    uint kv_dim;
    uint ctx;
    uint dim;
} p;
#include "step_params.glsl"
#include "medusa_layout.glsl"

void main() {
    const uint id = gl_GlobalInvocationID.x;
    const uint kept = state[S_KEPT], base = state[S_OLD_BASE];
    if (id < p.n_layers * p.kv_dim) {
        const uint layer = id / p.kv_dim, j = id % p.kv_dim;
        const uint off = layer * p.ctx * p.kv_dim + j;
        for (uint d = 1; d < kept; ++d) {
            const uint src = off + (base + state[S_PATH + d]) * p.kv_dim;
            const uint dst = off + (base + d) * p.kv_dim;
            kc[dst] = kc[src];
            vc[dst] = vc[src];
        }
    }
    if (id < p.dim) head_in[id] = hidden[state[S_PATH + kept - 1] * p.dim + id];
}
