#include "llm/cpu_attention.h"

#include <cmath>
#include <vector>

#include "llm/softmax.h"

namespace medusa {

bool within_window(const TokenBlock& block, int t, int s, int window) {
    if (window <= 0) return true;
    const int key_position = s < block.base ? s : block.positions[s - block.base];
    return block.positions[t] - key_position < window;
}

void cpu_attention(std::span<float> out, std::span<const float> q, std::span<const float> keys,
                   std::span<const float> values, const TokenBlock& block, int t, const AttentionHeads& shape) {
    const int n_keys = block.base + block.size(), hd = shape.head_dim, kv_dim = shape.kv_dim();
    const int kv_mul = shape.n_heads / shape.n_kv_heads;
    std::vector<uint8_t> seen(n_keys);
    for (int s = 0; s < n_keys; ++s) seen[s] = block.sees_slot(t, s) && within_window(block, t, s, shape.window);
    const float scale = shape.scale > 0 ? shape.scale : 1.0f / std::sqrt(float(hd));
    std::vector<float> scores(n_keys);
    for (int h = 0; h < shape.n_heads; ++h) {
        const float* qh = &q[size_t(h) * hd];
        const size_t kv_off = size_t(h / kv_mul) * hd;
        for (int s = 0; s < n_keys; ++s) {
            if (!seen[s]) continue;
            float acc = 0;
            for (int d = 0; d < hd; ++d) acc += qh[d] * keys[size_t(s) * kv_dim + kv_off + d];
            scores[s] = acc * scale;
        }
        const float sum = exp_shifted(scores, seen);
        for (int d = 0; d < hd; ++d) {
            float acc = 0;
            for (int s = 0; s < n_keys; ++s) acc += scores[s] * values[size_t(s) * kv_dim + kv_off + d];
            out[size_t(h) * hd + d] = acc / sum;
        }
    }
}

}  // namespace medusa
