#version 450
// Verifies the Medusa tree after its forward pass, in one workgroup:
// each node is scored against its parent's distribution, the best candidate path is chosen
// under the acceptance rule, the bonus token is drawn, and the step's trace is written.
// Rules: 0 greedy (a node passes when it is its parent's argmax), 1 typical (its probability at
// temperature T exceeds min(eps, delta * exp(-H(parent)))), 2 sample (lossless speculative
// sampling: each child is accepted with its residual probability, SpecInfer-style), and 3, a
// deliberately wrong sampler that draws the bonus from the full distribution instead of the
// residual; it exists only so the losslessness test can show that it notices.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Logits { float L[]; };
layout(std430, binding = 1) readonly buffer Argmax { uint amax[]; };
layout(std430, binding = 2) readonly buffer Stats { float stats[]; };
layout(std430, binding = 3) readonly buffer Tree { uint tree[]; };
layout(std430, binding = 4) buffer Params { uint P[]; };
layout(std430, binding = 5) buffer State { uint state[]; };
layout(std430, binding = 6) writeonly buffer Trace { uint trace[]; };
layout(std430, binding = 7) readonly buffer CandidateProbs { float cand_prob[]; };
layout(push_constant) uniform Push {
    uint vocab;
    uint rule;
    float temperature;
    float eps;
    float delta;
} p;
#include "step_params.glsl"
#include "medusa_layout.glsl"
#include "reduce.glsl"

shared float node_p[TMAX];
shared bool node_ok[TMAX];
shared uint node_status[TMAX];
shared uint excluded[32];  // tokens of rejected children at the node the bonus is drawn from
shared uint n_excluded;
shared uint last_node;
shared uint bonus_needs_draw;
shared float draw_u;
shared float chunk_sum[64];
shared uint drawn;

uint pcg(uint v) {
    uint s = v * 747796405u + 2891336453u;
    uint w = ((s >> ((s >> 28u) + 4u)) ^ s) * 277803737u;
    return (w >> 22u) ^ w;
}
float uniform01(uint j) { return float(pcg(pcg(pcg(state[S_SEED]) ^ state[S_STEP]) ^ j) >> 8) / 16777216.0; }

float inv_t() { return p.rule == 0u || p.temperature <= 0.0 ? 1.0 : 1.0 / p.temperature; }
// Probability of `tok` at node n under the rule's temperature.
float prob_at(uint n, uint tok) { return exp(L[n * p.vocab + tok] * inv_t() - stats[2 * n]); }

bool is_excluded(uint tok) {
    for (uint e = 0; e < n_excluded; ++e)
        if (excluded[e] == tok) return true;
    return false;
}

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint n = tree[T_NODES];
    const uint base = P[P_BASE];
    // 1. Score every node against its parent.
    for (uint i = tid; i < n; i += 64) {
        const uint tok = P[P_TOKENS + i];
        const uint par = tree[T_PARENT + i];
        float pr = 1.0, limit = 0.0;
        bool ok = true;
        if (par != NONE) {
            pr = prob_at(par, tok);
            limit = min(p.eps, p.delta * exp(-stats[2 * par + 1]));
            ok = p.rule == 0u ? tok == amax[par] : pr > limit;
        }
        node_p[i] = pr;
        node_ok[i] = ok;
        node_status[i] = ok ? 2u : 0u;
        trace[R_TOKEN + i] = tok;
        trace[R_MODEL_P + i] = floatBitsToUint(pr);
        trace[R_HEAD_P + i] = floatBitsToUint(i == 0 ? 1.0 : cand_prob[tree[T_INDEX + i]]);
        trace[R_LIMIT + i] = floatBitsToUint(limit);
    }
    barrier();
    // 2. Choose the accepted path (one invocation: the tree is small).
    if (tid == 0) {
        n_excluded = 0;
        uint best = 0, best_len = 0;
        const bool sampling = p.rule >= 2u;
        if (!sampling) {
            float best_ll = -3.4e38;
            for (uint r = 0; r < tree[T_PATHS]; ++r) {
                uint len = 0;
                float ll = 0.0;
                for (uint d = 1; d < tree[T_PATH_LEN]; ++d) {
                    const uint node = tree[T_PATH_NODES + r * MAX_PATH + d];
                    if (node == NONE || !node_ok[node]) break;
                    ++len;
                    ll += log(node_p[node]);
                }
                if (len > best_len || (len == best_len && ll > best_ll)) best = r, best_len = len, best_ll = ll;
            }
            last_node = best_len == 0 ? 0u : tree[T_PATH_NODES + best * MAX_PATH + best_len];
            for (uint d = 0; d <= best_len; ++d) state[S_PATH + d] = tree[T_PATH_NODES + best * MAX_PATH + d];
        } else {
            // Walk down from the root; at each node try its children in rank order.
            uint cur = 0, j = 0;
            state[S_PATH] = 0;
            float removed = 0.0;
            for (;;) {
                bool moved = false;
                removed = 0.0;
                n_excluded = 0;
                for (uint ch = tree[T_FIRST_CHILD + cur]; ch != NONE; ch = tree[T_NEXT_SIBLING + ch]) {
                    node_status[ch] |= 4u;
                    const float residual = max(1.0 - removed, 1e-20);
                    if (uniform01(j++) < node_p[ch] / residual) {
                        cur = ch;
                        moved = true;
                        break;
                    }
                    removed += node_p[ch];
                    if (n_excluded < 32) excluded[n_excluded++] = P[P_TOKENS + ch];
                }
                if (!moved) break;
                ++best_len;
                state[S_PATH + best_len] = cur;
            }
            last_node = cur;
            // All probability mass rejected (rounding): draw from the full distribution.
            if (removed >= 0.999999 || p.rule == 3u) n_excluded = 0;
            draw_u = uniform01(j);
        }
        if (p.rule == 1u) draw_u = uniform01(1000u);
        for (uint d = 0; d <= best_len; ++d) node_status[state[S_PATH + d]] |= 1u;
        trace[R_ACCEPTED] = best_len;
        trace[R_BEST_PATH] = best;
        trace[R_BASE] = base;
        trace[R_ROOT] = state[S_ROOT];
        for (uint d = 0; d < MAX_PATH; ++d) trace[R_PATH + d] = d <= best_len ? state[S_PATH + d] : NONE;
        state[S_KEPT] = best_len + 1;
        state[S_OLD_BASE] = base;
        bonus_needs_draw = p.rule == 0u ? 0u : 1u;
        drawn = amax[last_node];
    }
    barrier();
    // 3. The bonus token: argmax when greedy, else a draw from the (residual) distribution.
    if (bonus_needs_draw != 0u) {
        const uint chunk = (p.vocab + 63) / 64;
        const uint lo = min(tid * chunk, p.vocab), hi = min(lo + chunk, p.vocab);
        float s = 0.0;
        for (uint i = lo; i < hi; ++i)
            if (!is_excluded(i)) s += prob_at(last_node, i);
        chunk_sum[tid] = s;
        barrier();
        if (tid == 0) {
            float total = 0.0;
            for (uint c = 0; c < 64; ++c) total += chunk_sum[c];
            float target = draw_u * total, acc = 0.0;
            uint c = 0;
            while (c < 63 && acc + chunk_sum[c] <= target) acc += chunk_sum[c++];
            uint pick = NONE;
            for (uint i = min(c * chunk, p.vocab); i < min(c * chunk + chunk, p.vocab); ++i) {
                if (is_excluded(i)) continue;
                const float pi = prob_at(last_node, i);
                if (pi <= 0.0) continue;
                pick = i;
                acc += pi;
                if (acc > target) break;
            }
            drawn = pick == NONE ? amax[last_node] : pick;
        }
        barrier();
    }
    for (uint i = tid; i < n; i += 64) trace[R_STATUS + i] = node_status[i];
    if (tid == 0) {
        trace[R_BONUS] = drawn;
        state[S_ROOT] = drawn;
        state[S_STEP] += 1u;
        P[P_BASE] = base + state[S_KEPT];
    }
}
