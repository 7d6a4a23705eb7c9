// The reusable training pieces (train/backward_reference.h, shaders/train_*.comp): the CPU
// reference's backward of each against central finite differences of its own forward, and each
// GPU kernel against the CPU reference on random inputs (sizes off the kernels' tile widths).
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <functional>

#include "gpu_fixture.h"
#include "gradient_check.h"
#include "train/backward_reference.h"
#include "train/train_kernels.h"

using namespace medusa;
using namespace medusa::train;
using medusa::test::gpu_context;
using ref::Vec;
using medusa::test::check_fd;
using medusa::test::dot;
using medusa::test::random_vec;

namespace {

std::vector<float> to_float(const Vec& v) { return std::vector<float>(v.begin(), v.end()); }

// Max |gpu - ref| relative to the largest |ref|.
double rel_diff(const std::vector<float>& gpu, const Vec& want) {
    REQUIRE(gpu.size() == want.size());
    double num = 0, den = 1e-12;
    for (size_t i = 0; i < gpu.size(); ++i) {
        num = std::max(num, std::abs(double(gpu[i]) - want[i]));
        den = std::max(den, std::abs(want[i]));
    }
    return num / den;
}

const ref::AttentionShape kAttention{11, 6, 4, 2, 4};  // two sequences, the second cut short; 2 q heads per kv head
std::vector<int> positions(int rows, int first = 3) {
    std::vector<int> p(rows);
    for (int r = 0; r < rows; ++r) p[r] = first + 5 * r;
    return p;
}

}  // namespace

TEST_CASE("the CPU reference's backward pieces match finite differences", "[train-backward]") {
    SECTION("linear with bias") {
        const int rows = 3, in = 5, out = 4;
        Vec x = random_vec(rows * in, 1), w = random_vec(out * in, 2), b = random_vec(out, 3);
        const Vec dy = random_vec(rows * out, 4);
        const auto g = ref::linear_backward(x, w, dy, rows, in, out, true);
        auto loss = [&] { return dot(dy, ref::linear(x, w, b, rows, in, out)); };
        check_fd(x, g.dx, loss, "dx");
        check_fd(w, g.dw, loss, "dw");
        check_fd(b, g.db, loss, "db");
    }
    SECTION("RMSNorm with and without a gain") {
        const int rows = 3, dim = 6;
        for (bool with_gain : {true, false}) {
            CAPTURE(with_gain);
            Vec x = random_vec(rows * dim, 5), gain = with_gain ? random_vec(dim, 6) : Vec{};
            const Vec dy = random_vec(rows * dim, 7);
            const auto g = ref::rmsnorm_backward(x, gain, dy, rows, dim, 1e-5);
            auto loss = [&] { return dot(dy, ref::rmsnorm(x, gain, rows, dim, 1e-5).y); };
            check_fd(x, g.dx, loss, "dx");
            if (with_gain) check_fd(gain, g.dgain, loss, "dgain");
        }
    }
    SECTION("RoPE: rotating back is the backward") {
        const int rows = 4, width = 12, stride = 14;
        Vec x = random_vec(rows * stride, 8);
        const Vec dy = random_vec(rows * stride, 9);
        Vec dx = dy;
        ref::rope(dx, rows, width, stride, 4, positions(rows), 10000.0, -1.0);
        auto loss = [&] {
            Vec y = x;
            ref::rope(y, rows, width, stride, 4, positions(rows), 10000.0);
            return dot(dy, y);
        };
        check_fd(x, dx, loss, "dx");
    }
    SECTION("causal attention with grouped K/V heads over two sequences") {
        const auto& s = kAttention;
        Vec qkv = random_vec(size_t(s.rows) * s.stride(), 10, 1.5);
        const Vec dout = random_vec(size_t(s.rows) * s.n_heads * s.head_dim, 11);
        const Vec d = ref::attention_backward(qkv, dout, s);
        check_fd(qkv, d, [&] { return dot(dout, ref::attention(qkv, s)); }, "dqkv");
    }
    SECTION("SwiGLU") {
        const int rows = 3, hidden = 5;
        Vec gu = random_vec(rows * 2 * hidden, 12, 3.0);
        const Vec da = random_vec(rows * hidden, 13);
        check_fd(gu, ref::swiglu_backward(gu, da, rows, hidden), [&] { return dot(da, ref::swiglu(gu, rows, hidden)); },
                 "dgu");
    }
    SECTION("SmoothL1, both sides of the threshold") {
        const int rows = 3, dim = 7;
        Vec pred = random_vec(rows * dim, 14, 3.0);
        const Vec target = random_vec(rows * dim, 15, 1.0), w = {0.5, 0.0, 2.0};
        const auto l = ref::smooth_l1(pred, target, w, rows, dim, 1.0, 0.7);
        int outside = 0;
        for (size_t i = 0; i < pred.size(); ++i) outside += std::abs(pred[i] - target[i]) > 1.0;
        CHECK(outside > 3);
        check_fd(pred, l.grad, [&] { return ref::smooth_l1(pred, target, w, rows, dim, 1.0, 0.7).loss; }, "dpred");
    }
    SECTION("soft-target cross-entropy") {
        const int rows = 3, vocab = 9;
        Vec logits = random_vec(rows * vocab, 16, 3.0);
        const Vec t = random_vec(rows * vocab, 17, 3.0), w = {1.0, 0.25, 0.0};
        const auto l = ref::soft_cross_entropy(logits, t, w, rows, vocab, 0.1);
        check_fd(logits, l.grad, [&] { return ref::soft_cross_entropy(logits, t, w, rows, vocab, 0.1).loss; }, "dlogits");
    }
}

namespace {

struct Gpu {
    TrainKernels k{gpu_context(), kAttention.head_dim};
    template <class T>
    static std::unique_ptr<gpu::Buffer> buf(const std::vector<T>& v) {
        return test::buffer_with(v);
    }
    static std::unique_ptr<gpu::Buffer> buf(const Vec& v) { return test::buffer_with(to_float(v)); }
    static std::unique_ptr<gpu::Buffer> zeros(size_t n) { return test::buffer_with(std::vector<float>(n, 0.0f)); }
};

}  // namespace

TEST_CASE("GPU linear, bias and RMSNorm kernels match the CPU reference", "[train-backward]") {
    test::ValidationGuard guard;
    Gpu g;
    SECTION("linear: Y = X W^T + b, dX, dW, db, also accumulating; shapes the QUAD GEMM takes and others") {
        // {rows, in, out, offset of W in the parameter buffer}: the first fits no 4-float reads.
        for (auto [rows, in, out, w_off] : {std::array{37, 70, 66, 3}, std::array{36, 68, 64, 4}}) {
            CAPTURE(rows, in, out, w_off);
            const Vec x = random_vec(rows * in, 20), w = random_vec(out * in, 21), b = random_vec(out, 22);
            const Vec dy = random_vec(rows * out, 23), prior = random_vec(out * in + w_off, 24);
            // W and b sit at offsets inside one parameter buffer, as in a trainer.
            Vec params(w_off, 0.0);
            params.insert(params.end(), w.begin(), w.end());
            params.insert(params.end(), b.begin(), b.end());
            auto P = Gpu::buf(params), X = Gpu::buf(x), DY = Gpu::buf(dy), Y = Gpu::zeros(rows * out);
            auto DX = Gpu::zeros(rows * in), G = Gpu::buf(prior);
            const uint32_t wo = w_off, b_off = w_off + out * in;
            test::run_once([&](gpu::CommandSequence& s) {
                g.k.linear(s, {*X, 0, uint32_t(in)}, {*P, wo, uint32_t(in)}, {*Y, 0, uint32_t(out)}, rows, in, out);
                g.k.bias(s, *Y, *P, {uint32_t(rows), uint32_t(out), uint32_t(out), b_off, 0});
                g.k.linear_dx(s, {*DY, 0, uint32_t(out)}, {*P, wo, uint32_t(in)}, {*DX, 0, uint32_t(in)}, rows, in, out);
                g.k.linear_dw(s, {*DY, 0, uint32_t(out)}, {*X, 0, uint32_t(in)}, {*G, wo, uint32_t(in)}, rows, in, out,
                              true);
            });
            const auto want = ref::linear_backward(x, w, dy, rows, in, out, true);
            CHECK(rel_diff(test::read(*Y, rows * out), ref::linear(x, w, b, rows, in, out)) < 1e-5);
            CHECK(rel_diff(test::read(*DX, rows * in), want.dx) < 1e-5);
            const auto got = test::read(*G, prior.size());
            Vec dw_acc(want.dw);
            for (size_t i = 0; i < dw_acc.size(); ++i) dw_acc[i] += prior[w_off + i];
            CHECK(rel_diff(std::vector<float>(got.begin() + w_off, got.end()), dw_acc) < 1e-5);
            CHECK(got[0] == float(prior[0]));  // outside the weight: untouched
            // The bias gradient, overwriting.
            auto DB = Gpu::zeros(out + 5);
            test::run_once([&](gpu::CommandSequence& s) {
                g.k.bias_grad(s, *DY, *DB, {uint32_t(rows), uint32_t(out), uint32_t(out), 5, 0});
            });
            const auto db = test::read(*DB, out + 5);
            CHECK(rel_diff(std::vector<float>(db.begin() + 5, db.end()), want.db) < 1e-5);
        }
    }
    SECTION("RMSNorm forward, dX (accumulating onto a residual) and the gain gradient, with and without a gain") {
        const int rows = 70, dim = 48;
        for (bool with_gain : {true, false}) {
            CAPTURE(with_gain);
            const Vec x = random_vec(rows * dim, 30, 2.0), gain = random_vec(dim, 31), dy = random_vec(rows * dim, 32);
            const Vec residual = random_vec(rows * dim, 33);
            Vec params(7, 0.0);
            params.insert(params.end(), gain.begin(), gain.end());
            auto X = Gpu::buf(x), P = Gpu::buf(params), DY = Gpu::buf(dy), Y = Gpu::zeros(rows * dim);
            auto R = Gpu::zeros(rows), DX = Gpu::buf(residual), G = Gpu::zeros(7 + dim);
            const layout::TrainRmsnormPush p{rows, dim, 7, uint32_t(with_gain), 1e-5f, 0};
            layout::TrainRmsnormPush acc = p;
            acc.accumulate = 1;
            test::run_once([&](gpu::CommandSequence& s) {
                g.k.rmsnorm(s, *X, *Y, *R, *P, p);
                g.k.rmsnorm_dx(s, *X, *DY, *R, *P, *DX, acc);
                if (with_gain) g.k.rmsnorm_dgain(s, *X, *DY, *R, *G, p);
            });
            const Vec ug = with_gain ? gain : Vec{};
            const auto want = ref::rmsnorm_backward(x, ug, dy, rows, dim, 1e-5);
            CHECK(rel_diff(test::read(*Y, rows * dim), ref::rmsnorm(x, ug, rows, dim, 1e-5).y) < 1e-5);
            Vec dx = want.dx;
            for (size_t i = 0; i < dx.size(); ++i) dx[i] += residual[i];
            CHECK(rel_diff(test::read(*DX, rows * dim), dx) < 1e-5);
            if (with_gain) {
                const auto dg = test::read(*G, 7 + dim);
                CHECK(rel_diff(std::vector<float>(dg.begin() + 7, dg.end()), want.dgain) < 1e-5);
            }
        }
    }
}

TEST_CASE("GPU RoPE, attention, SwiGLU and loss kernels match the CPU reference", "[train-backward]") {
    test::ValidationGuard guard;
    Gpu g;
    SECTION("RoPE forward and back on q and k columns of QKV rows") {
        const auto& s = kAttention;
        const int width = (s.n_heads + s.n_kv_heads) * s.head_dim;
        const Vec x = random_vec(size_t(s.rows) * s.stride(), 40);
        const auto pos = positions(s.rows, 100);  // large angles too
        auto X = Gpu::buf(x), POS = Gpu::buf(pos);
        const layout::TrainRopePush p{uint32_t(s.rows), uint32_t(width), uint32_t(s.stride()), uint32_t(s.head_dim),
                                      10000.0f, 1.0f};
        test::run_once([&](gpu::CommandSequence& seq) { g.k.rope(seq, *X, *POS, p); });
        Vec want = x;
        ref::rope(want, s.rows, width, s.stride(), s.head_dim, pos, 10000.0);
        // A GPU's sin and cos of large angles are a few ulps from libm's (NVIDIA: 1.6e-5 here).
        CHECK(rel_diff(test::read(*X, x.size()), want) < 1e-4);
        layout::TrainRopePush back = p;
        back.direction = -1.0f;
        test::run_once([&](gpu::CommandSequence& seq) { g.k.rope(seq, *X, *POS, back); });
        CHECK(rel_diff(test::read(*X, x.size()), x) < 1e-4);
    }
    SECTION("causal grouped-query attention forward and backward") {
        for (ref::AttentionShape s : {kAttention, ref::AttentionShape{150, 75, 4, 1, 4}}) {
            CAPTURE(s.rows, s.seq_len, s.n_kv_heads);
            const Vec qkv = random_vec(size_t(s.rows) * s.stride(), 41, 2.0);
            const Vec dout = random_vec(size_t(s.rows) * s.n_heads * s.head_dim, 42);
            auto QKV = Gpu::buf(qkv), DO = Gpu::buf(dout), O = Gpu::zeros(dout.size()), L = Gpu::zeros(s.rows * s.n_heads);
            auto DQKV = Gpu::zeros(qkv.size());
            const layout::TrainAttentionPush p{uint32_t(s.rows), uint32_t(s.seq_len), uint32_t(s.n_heads),
                                               uint32_t(s.n_kv_heads), uint32_t(s.stride())};
            test::run_once([&](gpu::CommandSequence& seq) {
                g.k.attention(seq, *QKV, *O, *L, p);
                g.k.attention_backward(seq, *QKV, *O, *L, *DO, *DQKV, p);
            });
            CHECK(rel_diff(test::read(*O, dout.size()), ref::attention(qkv, s)) < 1e-5);
            CHECK(rel_diff(test::read(*DQKV, qkv.size()), ref::attention_backward(qkv, dout, s)) < 1e-5);
        }
    }
    SECTION("SwiGLU forward and backward") {
        const int rows = 37, hidden = 45;
        const Vec gu = random_vec(rows * 2 * hidden, 50, 4.0), da = random_vec(rows * hidden, 51);
        auto GU = Gpu::buf(gu), A = Gpu::zeros(rows * hidden), DA = Gpu::buf(da), DGU = Gpu::zeros(gu.size());
        test::run_once([&](gpu::CommandSequence& s) {
            g.k.swiglu(s, *GU, *A, {rows, hidden});
            g.k.swiglu_backward(s, *GU, *DA, *DGU, {rows, hidden});
        });
        CHECK(rel_diff(test::read(*A, rows * hidden), ref::swiglu(gu, rows, hidden)) < 1e-5);
        CHECK(rel_diff(test::read(*DGU, gu.size()), ref::swiglu_backward(gu, da, rows, hidden)) < 1e-5);
    }
    SECTION("SmoothL1 and soft-target cross-entropy with row weights") {
        const int rows = 37, dim = 24, vocab = 300;
        const Vec pred = random_vec(rows * dim, 60, 2.5), target = random_vec(rows * dim, 61);
        Vec w(rows);
        for (int r = 0; r < rows; ++r) w[r] = r % 5 == 4 ? 0.0 : 1.0 / rows;  // some padding rows
        Vec logits = random_vec(rows * vocab, 62, 4.0);
        Vec tlogits = random_vec(rows * vocab, 63, 4.0);
        tlogits[5 * vocab + 17] = 10.0;  // p's top token in row 5 ties with an earlier one under q
        logits[5 * vocab + 17] = logits[5 * vocab + 3] = 9.0;
        auto PRED = Gpu::buf(pred), TGT = Gpu::buf(target), W = Gpu::buf(w), D = Gpu::zeros(pred.size());
        auto LG = Gpu::buf(logits), TL = Gpu::buf(tlogits), ST = Gpu::zeros(3 * rows);
        test::run_once([&](gpu::CommandSequence& s) {
            g.k.smooth_l1(s, *PRED, *TGT, *W, *D, *ST, {rows, dim, 0, 1.0f, 0.8f, 0});
            g.k.soft_cross_entropy(s, *LG, *TL, *W, *ST, rows, {vocab, rows, 2 * rows, 0.1f});
        });
        const auto l1 = ref::smooth_l1(pred, target, w, rows, dim, 1.0, 0.8);
        const auto ce = ref::soft_cross_entropy(logits, tlogits, w, rows, vocab, 0.1);
        CHECK(rel_diff(test::read(*D, pred.size()), l1.grad) < 1e-5);
        CHECK(rel_diff(test::read(*LG, logits.size()), ce.grad) < 1e-5);
        const auto st = test::read(*ST, 3 * rows);
        for (int r = 0; r < rows; ++r) {
            CAPTURE(r);
            CHECK(st[r] == Approx(l1.row_loss[r]).epsilon(1e-5));
            CHECK(st[rows + r] == Approx(ce.row_loss[r]).epsilon(1e-4));
            CHECK(int(st[2 * rows + r]) == ce.rank[r]);
        }
    }
}
