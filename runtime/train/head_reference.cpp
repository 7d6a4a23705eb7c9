#include "train/head_reference.h"

#include <algorithm>
#include <cmath>

#include "llm/softmax.h"

namespace medusa::train {


HeadBatchResult head_forward_backward(const MedusaHeads& heads, int k, const std::vector<float>& h,
                                      const std::vector<int>& targets, float scale, bool want_grad) {
    return head_forward_backward(heads, k, std::vector<double>(h.begin(), h.end()), targets, scale, want_grad);
}

HeadBatchResult head_forward_backward(const MedusaHeads& heads, int k, const std::vector<double>& h,
                                      const std::vector<int>& targets, float scale, bool want_grad) {
    const MedusaHead& head = heads.heads.at(k);
    const int D = heads.dim, V = heads.vocab, L = heads.layers, rows = int(targets.size());
    HeadBatchResult r;
    if (want_grad) {
        r.grad.w1.assign(L, std::vector<float>(size_t(D) * D, 0.0f));
        r.grad.b1.assign(L, std::vector<float>(D, 0.0f));
        r.grad.w2.assign(size_t(V) * D, 0.0f);
        r.dh.assign(size_t(rows) * D, 0.0);
    }
    std::vector<std::vector<double>> xs(L + 1), zs(L);
    std::vector<double> logits(V), dx(D), dz(D);
    for (int b = 0; b < rows; ++b) {
        // Forward in double so the reference is the more exact side of every comparison.
        xs[0].assign(h.begin() + size_t(b) * D, h.begin() + size_t(b + 1) * D);
        for (int l = 0; l < L; ++l) {
            zs[l].assign(D, 0.0);
            xs[l + 1].assign(D, 0.0);
            for (int o = 0; o < D; ++o) {
                double z = head.b1[l][o];
                for (int i = 0; i < D; ++i) z += double(head.w1[l][size_t(o) * D + i]) * xs[l][i];
                zs[l][o] = z;
                xs[l + 1][o] = xs[l][o] + z / (1.0 + std::exp(-z));
            }
        }
        const int y = targets[b];
        r.ranks.push_back(-1);
        if (y < 0) continue;
        for (int v = 0; v < V; ++v) {
            double s = 0;
            for (int i = 0; i < D; ++i) s += double(head.w2[size_t(v) * D + i]) * xs[L][i];
            logits[v] = s;
        }
        const ExpSum z = exp_sum(logits);
        int rank = 0;
        for (int v = 0; v < V; ++v)
            if (logits[v] > logits[y] || (logits[v] == logits[y] && v < y)) ++rank;
        r.loss += scale * (z.log_normalizer() - logits[y]);
        r.valid++;
        r.top1 += rank == 0;
        r.top5 += rank < 5;
        r.ranks.back() = rank;
        if (!want_grad) continue;
        std::fill(dx.begin(), dx.end(), 0.0);
        for (int v = 0; v < V; ++v) {
            const double dl = scale * (z.prob(logits[v]) - (v == y ? 1.0 : 0.0));
            for (int i = 0; i < D; ++i) {
                r.grad.w2[size_t(v) * D + i] += float(dl * xs[L][i]);
                dx[i] += dl * head.w2[size_t(v) * D + i];
            }
        }
        for (int l = L - 1; l >= 0; --l) {
            for (int o = 0; o < D; ++o) {
                const double z = zs[l][o], s = 1.0 / (1.0 + std::exp(-z));
                dz[o] = dx[o] * s * (1.0 + z * (1.0 - s));
                r.grad.b1[l][o] += float(dz[o]);
            }
            for (int o = 0; o < D; ++o)
                for (int i = 0; i < D; ++i) {
                    r.grad.w1[l][size_t(o) * D + i] += float(dz[o] * xs[l][i]);
                    dx[i] += dz[o] * head.w1[l][size_t(o) * D + i];  // dx already holds the residual part
                }
        }
        std::copy(dx.begin(), dx.end(), r.dh.begin() + size_t(b) * D);
    }
    return r;
}

void adamw_step(std::vector<float>& p, const std::vector<float>& g, std::vector<float>& m, std::vector<float>& v,
                const AdamW& o, int step) {
    double ss = 0;
    for (float x : g) ss += double(x) * x;
    const double norm = std::sqrt(ss);
    const float gs = (o.clip > 0 && norm > o.clip) ? float(o.clip / norm) : 1.0f;
    const float bc1 = 1.0f - std::pow(o.beta1, float(step)), bc2 = 1.0f - std::pow(o.beta2, float(step));
    for (size_t i = 0; i < p.size(); ++i) {
        const float gi = g[i] * gs;
        m[i] = o.beta1 * m[i] + (1 - o.beta1) * gi;
        v[i] = o.beta2 * v[i] + (1 - o.beta2) * gi * gi;
        p[i] -= o.lr * ((m[i] / bc1) / (std::sqrt(v[i] / bc2) + o.eps) + o.weight_decay * p[i]);
    }
}

}  // namespace medusa::train
