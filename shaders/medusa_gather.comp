#version 450
// Lays the tree's tokens into the forward pass's parameters: node i takes candidate
// tree_index[i] at position base + depth[i]. The root is the token the last step emitted.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Tree { uint tree[]; };
layout(std430, binding = 1) buffer Candidates { uint cand_token[]; };
layout(std430, binding = 2) readonly buffer State { uint state[]; };
layout(std430, binding = 3) buffer Params { uint P[]; };
#include "step_params.glsl"
#include "medusa_layout.glsl"

void main() {
    const uint n = tree[T_NODES];
    const uint base = P[P_BASE];
    for (uint i = gl_LocalInvocationID.x; i < n; i += 64) {
        const uint c = tree[T_INDEX + i];
        P[P_TOKENS + i] = c == 0 ? state[S_ROOT] : cand_token[c];
        P[P_POS + i] = base + tree[T_DEPTH + i];
    }
    if (gl_LocalInvocationID.x == 0) {
        P[P_COUNT] = n;
        cand_token[0] = state[S_ROOT];
    }
}
