#include "train/backward_reference.h"

#include <algorithm>
#include <cmath>

#include "llm/softmax.h"

namespace medusa::train::ref {

Vec linear(const Vec& x, const Vec& w, const Vec& b, int rows, int in, int out) {
    Vec y(size_t(rows) * out);
    for (int r = 0; r < rows; ++r)
        for (int o = 0; o < out; ++o) {
            double s = b.empty() ? 0.0 : b[o];
            for (int i = 0; i < in; ++i) s += x[size_t(r) * in + i] * w[size_t(o) * in + i];
            y[size_t(r) * out + o] = s;
        }
    return y;
}

LinearGrads linear_backward(const Vec& x, const Vec& w, const Vec& dy, int rows, int in, int out, bool bias) {
    LinearGrads g;
    g.dx.assign(size_t(rows) * in, 0.0);
    g.dw.assign(size_t(out) * in, 0.0);
    if (bias) g.db.assign(out, 0.0);
    for (int r = 0; r < rows; ++r)
        for (int o = 0; o < out; ++o) {
            const double d = dy[size_t(r) * out + o];
            if (bias) g.db[o] += d;
            for (int i = 0; i < in; ++i) {
                g.dx[size_t(r) * in + i] += d * w[size_t(o) * in + i];
                g.dw[size_t(o) * in + i] += d * x[size_t(r) * in + i];
            }
        }
    return g;
}

Vec lora_linear(const Vec& x, const Vec& w, const Vec& a, const Vec& b, int rows, int in, int out, int rank,
                double scale) {
    Vec y = linear(x, w, {}, rows, in, out);
    const Vec u = linear(x, a, {}, rows, in, rank);
    const Vec z = linear(u, b, {}, rows, rank, out);
    for (size_t i = 0; i < y.size(); ++i) y[i] += scale * z[i];
    return y;
}

LoraGrads lora_linear_backward(const Vec& x, const Vec& w, const Vec& a, const Vec& b, const Vec& dy, int rows, int in,
                               int out, int rank, double scale) {
    // z = u B^T with u = x A^T; the scale applies to dz.
    Vec dz = dy;
    for (double& v : dz) v *= scale;
    const Vec u = linear(x, a, {}, rows, in, rank);
    const LinearGrads gb = linear_backward(u, b, dz, rows, rank, out, false);
    const LinearGrads ga = linear_backward(x, a, gb.dx, rows, in, rank, false);
    LoraGrads g;
    g.dx = linear_backward(x, w, dy, rows, in, out, false).dx;
    for (size_t i = 0; i < g.dx.size(); ++i) g.dx[i] += ga.dx[i];
    g.da = ga.dw;
    g.db = gb.dw;
    return g;
}

RmsnormOut rmsnorm(const Vec& x, const Vec& gain, int rows, int dim, double eps) {
    RmsnormOut o;
    o.y.resize(x.size());
    o.r.resize(rows);
    for (int r = 0; r < rows; ++r) {
        double ss = 0;
        for (int i = 0; i < dim; ++i) ss += x[size_t(r) * dim + i] * x[size_t(r) * dim + i];
        o.r[r] = 1.0 / std::sqrt(ss / dim + eps);
        for (int i = 0; i < dim; ++i)
            o.y[size_t(r) * dim + i] = (gain.empty() ? 1.0 : gain[i]) * x[size_t(r) * dim + i] * o.r[r];
    }
    return o;
}

RmsnormGrads rmsnorm_backward(const Vec& x, const Vec& gain, const Vec& dy, int rows, int dim, double eps) {
    const Vec r = rmsnorm(x, gain, rows, dim, eps).r;
    RmsnormGrads g;
    g.dx.resize(x.size());
    if (!gain.empty()) g.dgain.assign(dim, 0.0);
    for (int row = 0; row < rows; ++row) {
        const double* xr = &x[size_t(row) * dim];
        const double* d = &dy[size_t(row) * dim];
        // y_i = g_i x_i r, dr/dx_j = -r^3 x_j / dim
        double s = 0;
        for (int i = 0; i < dim; ++i) s += (gain.empty() ? 1.0 : gain[i]) * d[i] * xr[i];
        for (int j = 0; j < dim; ++j) {
            const double gj = gain.empty() ? 1.0 : gain[j];
            g.dx[size_t(row) * dim + j] = d[j] * gj * r[row] - r[row] * r[row] * r[row] * xr[j] * s / dim;
            if (!gain.empty()) g.dgain[j] += d[j] * xr[j] * r[row];
        }
    }
    return g;
}

void rope(Vec& x, int rows, int width, int stride, int head_dim, const std::vector<int>& positions, double theta,
          double direction) {
    for (int r = 0; r < rows; ++r)
        for (int i = 0; i < width; i += 2) {
            const double freq = 1.0 / std::pow(theta, double(i % head_dim) / head_dim);
            const double a = positions[r] * freq, c = std::cos(a), s = direction * std::sin(a);
            double& v0 = x[size_t(r) * stride + i];
            double& v1 = x[size_t(r) * stride + i + 1];
            const double a0 = v0, a1 = v1;
            v0 = a0 * c - a1 * s;
            v1 = a0 * s + a1 * c;
        }
}

void rope(Vec& x, int rows, int width, int stride, const RopeSpec& rs, const std::vector<int>& positions,
          double direction) {
    const int rotated = rs.rotated > 0 ? rs.rotated : rs.head_dim;
    for (int r = 0; r < rows; ++r)
        for (int i = 0; i < width; i += 2) {
            const int d = i % rs.head_dim;
            if (d >= rotated) continue;
            double freq = 1.0 / std::pow(rs.theta, double(d) / rotated);
            if (!rs.factors.empty()) freq /= rs.factors[size_t(d / 2)];
            const double a = positions[r] / rs.position_scale * freq;
            const double c = std::cos(a) * rs.attn_factor, s = direction * std::sin(a) * rs.attn_factor;
            double& v0 = x[size_t(r) * stride + i];
            double& v1 = x[size_t(r) * stride + i + 1];
            const double a0 = v0, a1 = v1;
            v0 = a0 * c - a1 * s;
            v1 = a0 * s + a1 * c;
        }
}

double AttentionShape::score_scale() const { return scale > 0 ? scale : 1.0 / std::sqrt(double(head_dim)); }

int AttentionShape::first_seen(int i) const {
    const int start = (i / seq_len) * seq_len;
    return window > 0 ? std::max(start, i + 1 - window) : start;
}

namespace {

// The attention probabilities of one (row i, head h) over the rows of its sequence it sees.
struct Probs {
    int start;
    Vec p;  // p[j - start]
};

Probs probs(const Vec& qkv, const AttentionShape& s, int i, int h) {
    const int hd = s.head_dim, stride = s.stride(), g = h / (s.n_heads / s.n_kv_heads);
    Probs out{s.first_seen(i), {}};
    for (int j = out.start; j <= i; ++j) {
        double d = 0;
        for (int e = 0; e < hd; ++e)
            d += qkv[size_t(i) * stride + h * hd + e] * qkv[size_t(j) * stride + (s.n_heads + g) * hd + e];
        out.p.push_back(d * s.score_scale());
    }
    softmax(out.p);
    return out;
}

}  // namespace

Vec attention(const Vec& qkv, const AttentionShape& s) {
    const int hd = s.head_dim, stride = s.stride(), group = s.n_heads / s.n_kv_heads;
    Vec o(size_t(s.rows) * s.n_heads * hd, 0.0);
    for (int i = 0; i < s.rows; ++i)
        for (int h = 0; h < s.n_heads; ++h) {
            const Probs p = probs(qkv, s, i, h);
            const int v_col = (s.n_heads + s.n_kv_heads + h / group) * hd;
            for (int j = p.start; j <= i; ++j)
                for (int e = 0; e < hd; ++e)
                    o[(size_t(i) * s.n_heads + h) * hd + e] += p.p[j - p.start] * qkv[size_t(j) * stride + v_col + e];
        }
    return o;
}

Vec attention_backward(const Vec& qkv, const Vec& dout, const AttentionShape& s) {
    const int hd = s.head_dim, stride = s.stride(), group = s.n_heads / s.n_kv_heads;
    const double scale = s.score_scale();
    Vec d(qkv.size(), 0.0);
    for (int i = 0; i < s.rows; ++i)
        for (int h = 0; h < s.n_heads; ++h) {
            const Probs p = probs(qkv, s, i, h);
            const int q_col = h * hd, k_col = (s.n_heads + h / group) * hd, v_col = k_col + s.n_kv_heads * hd;
            const double* go = &dout[(size_t(i) * s.n_heads + h) * hd];
            // dP_ij = dO_i . v_j; dS_ij = P_ij (dP_ij - sum_k P_ik dP_ik)
            Vec dp(p.p.size());
            double mean = 0;
            for (int j = p.start; j <= i; ++j) {
                double acc = 0;
                for (int e = 0; e < hd; ++e) acc += go[e] * qkv[size_t(j) * stride + v_col + e];
                dp[j - p.start] = acc;
                mean += p.p[j - p.start] * acc;
            }
            for (int j = p.start; j <= i; ++j) {
                const double pj = p.p[j - p.start], ds = pj * (dp[j - p.start] - mean) * scale;
                for (int e = 0; e < hd; ++e) {
                    d[size_t(j) * stride + v_col + e] += pj * go[e];
                    d[size_t(i) * stride + q_col + e] += ds * qkv[size_t(j) * stride + k_col + e];
                    d[size_t(j) * stride + k_col + e] += ds * qkv[size_t(i) * stride + q_col + e];
                }
            }
        }
    return d;
}

namespace {

// The gate's activation and its slope at g.
std::pair<double, double> gate(double g, bool gelu) {
    if (gelu) {
        const double k = 0.7978845608028654, c = 0.044715;  // sqrt(2 / pi)
        const double t = std::tanh(k * (g + c * g * g * g));
        return {0.5 * g * (1.0 + t), 0.5 * (1.0 + t) + 0.5 * g * (1.0 - t * t) * k * (1.0 + 3.0 * c * g * g)};
    }
    const double s = 1.0 / (1.0 + std::exp(-g));
    return {g * s, s + g * s * (1.0 - s)};
}

}  // namespace

Vec swiglu(const Vec& gu, int rows, int hidden, bool gelu) {
    Vec a(size_t(rows) * hidden);
    for (int r = 0; r < rows; ++r)
        for (int i = 0; i < hidden; ++i) {
            const double g = gu[size_t(r) * 2 * hidden + i], u = gu[size_t(r) * 2 * hidden + hidden + i];
            a[size_t(r) * hidden + i] = gate(g, gelu).first * u;
        }
    return a;
}

Vec swiglu_backward(const Vec& gu, const Vec& da, int rows, int hidden, bool gelu) {
    Vec d(gu.size());
    for (int r = 0; r < rows; ++r)
        for (int i = 0; i < hidden; ++i) {
            const size_t at = size_t(r) * 2 * hidden + i;
            const double u = gu[at + hidden], dai = da[size_t(r) * hidden + i];
            const auto [act, slope] = gate(gu[at], gelu);
            d[at] = dai * u * slope;
            d[at + hidden] = dai * act;
        }
    return d;
}

LossOut smooth_l1(const Vec& pred, const Vec& target, const Vec& row_w, int rows, int dim, double beta, double weight) {
    LossOut o;
    o.grad.resize(pred.size());
    o.row_loss.resize(rows);
    for (int r = 0; r < rows; ++r) {
        double l = 0;
        for (int i = 0; i < dim; ++i) {
            const size_t at = size_t(r) * dim + i;
            const double d = pred[at] - target[at], a = std::abs(d);
            l += a < beta ? 0.5 * d * d / beta : a - 0.5 * beta;
            o.grad[at] = weight * row_w[r] / dim * std::clamp(d / beta, -1.0, 1.0);
        }
        o.row_loss[r] = l / dim;
        o.loss += weight * row_w[r] * o.row_loss[r];
    }
    return o;
}

LossOut soft_cross_entropy(const Vec& logits, const Vec& target_logits, const Vec& row_w, int rows, int vocab,
                           double weight) {
    LossOut o;
    o.grad.resize(logits.size());
    o.row_loss.resize(rows);
    auto distribution = [&](const double* l) {
        Vec p(l, l + vocab);
        softmax(p);
        return p;
    };
    for (int r = 0; r < rows; ++r) {
        const double* l = &logits[size_t(r) * vocab];
        const Vec p = distribution(&target_logits[size_t(r) * vocab]), q = distribution(l);
        const int top = int(std::max_element(p.begin(), p.end()) - p.begin());  // the lowest index on ties
        double loss = 0;
        int rank = 0;
        for (int v = 0; v < vocab; ++v) {
            loss -= p[v] * std::log(q[v]);
            rank += l[v] > l[top] || (l[v] == l[top] && v < top);
            o.grad[size_t(r) * vocab + v] = weight * row_w[r] * (q[v] - p[v]);
        }
        o.row_loss[r] = loss;
        o.rank.push_back(rank);
        o.loss += weight * row_w[r] * loss;
    }
    return o;
}

}  // namespace medusa::train::ref
