#include "train/eagle3_reference.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace medusa::train {

namespace {

using Vec = std::vector<double>;

// y = W x, W (out, in) row-major floats, reading `in` columns from column `col` of rows `stride` wide.
Vec matvec(const std::vector<float>& w, const double* x, int in, int out, int stride, int col = 0) {
    Vec y(size_t(out), 0.0);
    for (int o = 0; o < out; ++o) {
        double s = 0;
        for (int i = 0; i < in; ++i) s += double(w[size_t(o) * stride + col + i]) * x[i];
        y[size_t(o)] = s;
    }
    return y;
}

Vec rmsnorm(const double* x, const std::vector<float>& g, int d, double eps) {
    double ss = 0;
    for (int i = 0; i < d; ++i) ss += x[i] * x[i];
    const double r = 1.0 / std::sqrt(ss / d + eps);
    Vec y(static_cast<size_t>(d));
    for (int i = 0; i < d; ++i) y[size_t(i)] = double(g[size_t(i)]) * x[i] * r;
    return y;
}

// llama2.c's adjacent-pair RoPE, as train_rope.comp.
void rope(double* v, int n, int head_dim, int pos, double theta) {
    for (int i = 0; i < n; i += 2) {
        const double freq = 1.0 / std::pow(theta, double(i % head_dim) / head_dim), a = pos * freq;
        const double c = std::cos(a), s = std::sin(a), v0 = v[i], v1 = v[i + 1];
        v[i] = v0 * c - v1 * s;
        v[i + 1] = v0 * s + v1 * c;
    }
}

Vec log_softmax(const Vec& z) {
    const double m = *std::max_element(z.begin(), z.end());
    double s = 0;
    for (double v : z) s += std::exp(v - m);
    Vec out(z.size());
    for (size_t i = 0; i < z.size(); ++i) out[i] = z[i] - m - std::log(s);
    return out;
}

int first_max(const Vec& v) { return int(std::max_element(v.begin(), v.end()) - v.begin()); }

}  // namespace

std::vector<Eagle3StepLoss> eagle3_ttt_loss(const EagleLayer& L, const std::vector<float>& target_head,
                                            const Eagle3Batch& b) {
    const int d = L.dim, kv = L.kv_dim(), hd = L.head_dim(), hid = L.hidden_dim, V = L.draft_vocab();
    const int F = L.feature_dim(), R = b.rows, K = b.steps, group = L.n_heads / L.n_kv_heads;
    if (!L.eagle3() || b.features.size() != size_t(R) * F || b.embeddings.size() != size_t(K) * R * d ||
        b.target_hidden.size() != size_t(K) * R * d || b.row_weight.size() != size_t(K) * R ||
        b.positions.size() != size_t(K) * R || target_head.size() != size_t(V) * d)
        throw std::invalid_argument("an EAGLE-3 batch of the wrong shape for this layer");
    const double eps = L.rms_eps;
    std::vector<Vec> hs(static_cast<size_t>(R)), keys(static_cast<size_t>(K) * R), values(static_cast<size_t>(K) * R);
    for (int r = 0; r < R; ++r) {  // step 0's residual: fc over the fused feature, or the feature itself
        const Vec f(b.features.begin() + size_t(r) * F, b.features.begin() + size_t(r + 1) * F);
        hs[size_t(r)] = L.fuses() ? matvec(L.fc_w, f.data(), F, d, F) : f;
    }
    std::vector<Eagle3StepLoss> out(static_cast<size_t>(K));
    for (int k = 0; k < K; ++k) {
        std::vector<Vec> queries(static_cast<size_t>(R));
        for (int r = 0; r < R; ++r) {
            const size_t kr = size_t(k) * R + r;
            Vec e(b.embeddings.begin() + kr * d, b.embeddings.begin() + (kr + 1) * d);
            const Vec ne = rmsnorm(e.data(), L.input_norm, d, eps), nh = rmsnorm(hs[size_t(r)].data(), L.hidden_norm, d, eps);
            Vec a(ne);
            a.insert(a.end(), nh.begin(), nh.end());
            queries[size_t(r)] = matvec(L.wq, a.data(), 2 * d, d, 2 * d);
            keys[kr] = matvec(L.wk, a.data(), 2 * d, kv, 2 * d);
            values[kr] = matvec(L.wv, a.data(), 2 * d, kv, 2 * d);
            rope(queries[size_t(r)].data(), d, hd, b.positions[kr], L.rope_theta);
            rope(keys[kr].data(), kv, hd, b.positions[kr], L.rope_theta);
        }
        std::vector<Vec> next(static_cast<size_t>(R));
        for (int r = 0; r < R; ++r) {
            const int start = (r / b.seq_len) * b.seq_len;
            std::vector<size_t> seen;  // step 0's rows start..r, then row r of steps 1..k
            for (int j = start; j <= r; ++j) seen.push_back(size_t(j));
            for (int m = 1; m <= k; ++m) seen.push_back(size_t(m) * R + r);
            Vec att(size_t(d), 0.0);
            for (int h = 0; h < L.n_heads; ++h) {
                const int g = h / group;
                Vec s(seen.size());
                for (size_t n = 0; n < seen.size(); ++n) {
                    double dot = 0;
                    for (int i = 0; i < hd; ++i) dot += queries[size_t(r)][size_t(h * hd + i)] * keys[seen[n]][size_t(g * hd + i)];
                    s[n] = dot / std::sqrt(double(hd));
                }
                const Vec lp = log_softmax(s);
                for (size_t n = 0; n < seen.size(); ++n)
                    for (int i = 0; i < hd; ++i) att[size_t(h * hd + i)] += std::exp(lp[n]) * values[seen[n]][size_t(g * hd + i)];
            }
            Vec h = matvec(L.wo, att.data(), d, d, d);
            for (int i = 0; i < d; ++i) h[size_t(i)] += hs[size_t(r)][size_t(i)];
            const Vec xn = rmsnorm(h.data(), L.post_norm, d, eps);
            const Vec gate = matvec(L.w_gate, xn.data(), d, hid, d), up = matvec(L.w_up, xn.data(), d, hid, d);
            Vec act(static_cast<size_t>(hid));
            for (int i = 0; i < hid; ++i) act[size_t(i)] = gate[size_t(i)] / (1.0 + std::exp(-gate[size_t(i)])) * up[size_t(i)];
            const Vec down = matvec(L.w_down, act.data(), hid, d, hid);
            for (int i = 0; i < d; ++i) h[size_t(i)] += down[size_t(i)];
            next[size_t(r)] = h;
            // The loss of this step's row.
            const size_t kr = size_t(k) * R + r;
            const double w = b.row_weight[kr];
            if (w <= 0) continue;
            const Vec fn = rmsnorm(h.data(), L.final_norm, d, eps);
            const Vec logp = log_softmax(matvec(L.draft_head, fn.data(), d, V, d));
            Vec th(b.target_hidden.begin() + kr * d, b.target_hidden.begin() + (kr + 1) * d);
            const Vec tlogp = log_softmax(matvec(target_head, th.data(), d, V, d));
            double ce = 0;
            for (int v = 0; v < V; ++v) ce -= std::exp(tlogp[size_t(v)]) * logp[size_t(v)];
            Eagle3StepLoss& o = out[size_t(k)];
            o.loss += w * ce;
            o.unweighted += ce;
            o.rows += 1;
            o.top1 += first_max(logp) == first_max(tlogp);
        }
        hs = std::move(next);
    }
    return out;
}

double total_loss(const std::vector<Eagle3StepLoss>& steps) {
    double s = 0;
    for (const auto& st : steps) s += st.loss;
    return s;
}

}  // namespace medusa::train
