// Head training kernels: the CPU reference's gradients against finite differences, and every GPU
// forward/backward/update kernel against the CPU reference.
#include <catch2/catch.hpp>

#include <cmath>

#include "gpu_fixture.h"
#include "train/gpu_head_trainer.h"
#include "train/head_reference.h"

using namespace medusa;
using namespace medusa::train;
using medusa::test::gpu_context;
using medusa::test::random_floats;

namespace {

MedusaHeads random_heads(int k, int layers, int dim, int vocab, uint32_t seed) {
    MedusaHeads h;
    h.dim = dim;
    h.vocab = vocab;
    h.layers = layers;
    h.source = "random";
    for (int i = 0; i < k; ++i) {
        MedusaHead head;
        for (int l = 0; l < layers; ++l) {
            head.w1.push_back(random_floats(size_t(dim) * dim, seed++, 0.3f));
            head.b1.push_back(random_floats(dim, seed++, 0.3f));
        }
        head.w2 = random_floats(size_t(vocab) * dim, seed++, 0.5f);
        h.heads.push_back(std::move(head));
    }
    return h;
}

std::vector<int> random_targets(int n, int vocab, uint32_t seed) {
    std::vector<int> t(n);
    std::mt19937 rng(seed);
    for (auto& x : t) x = int(rng() % (vocab + 3)) - 3;  // about one in (vocab+3)/3 rows has no target
    t[0] = 1;
    return t;
}

// Max |a-b| relative to the largest |b|, over all parameters of one head.
double rel_diff(const MedusaHead& a, const MedusaHead& b) {
    double num = 0, den = 1e-12;
    auto cmp = [&](const std::vector<float>& x, const std::vector<float>& y) {
        REQUIRE(x.size() == y.size());
        for (size_t i = 0; i < x.size(); ++i) {
            num = std::max(num, double(std::abs(x[i] - y[i])));
            den = std::max(den, double(std::abs(y[i])));
        }
    };
    for (size_t l = 0; l < b.w1.size(); ++l) cmp(a.w1[l], b.w1[l]), cmp(a.b1[l], b.b1[l]);
    cmp(a.w2, b.w2);
    return num / den;
}

}  // namespace

TEST_CASE("the CPU reference's head gradients match finite differences", "[train]") {
    MedusaHeads heads = random_heads(1, 2, 6, 11, 3);
    const int rows = 5;
    const auto h = random_floats(size_t(rows) * 6, 99, 1.0f);
    std::vector<int> targets = {3, -1, 10, 0, 7};
    const float scale = 0.37f;
    const auto r = head_forward_backward(heads, 0, h, targets, scale);
    CHECK(r.valid == 4);
    auto check = [&](std::vector<float>& param, const std::vector<float>& grad, const char* what) {
        for (size_t i = 0; i < param.size(); ++i) {
            const float keep = param[i], eps = 1e-2f;
            param[i] = keep + eps;
            const double up = head_forward_backward(heads, 0, h, targets, scale, false).loss;
            param[i] = keep - eps;
            const double down = head_forward_backward(heads, 0, h, targets, scale, false).loss;
            param[i] = keep;
            const double fd = (up - down) / (2 * eps);
            CAPTURE(what, i, fd, grad[i]);
            CHECK(std::abs(fd - grad[i]) < 2e-4 + 2e-3 * std::abs(fd));
        }
    };
    MedusaHead& p = heads.heads[0];
    for (int l = 0; l < 2; ++l) {
        check(p.w1[l], r.grad.w1[l], "w1");
        check(p.b1[l], r.grad.b1[l], "b1");
    }
    check(p.w2, r.grad.w2, "w2");
}

TEST_CASE("GPU head forward and backward kernels match the CPU reference", "[train]") {
    test::ValidationGuard guard;
    const int K = 3, L = 2, D = 64, V = 512, rows = 37;  // rows and sizes off the 64-wide GEMM tiles
    for (auto [layers, variant] : {std::pair{1, TrainMatmul::Tiled}, {L, TrainMatmul::Tiled}, {L, TrainMatmul::Direct},
                                  {L, TrainMatmul::Quad}}) {
        CAPTURE(layers, variant);
        const MedusaHeads heads = random_heads(K, layers, D, V, 11);
        GpuHeadTrainer trainer(gpu_context(), heads, 48, variant);
        const auto h = random_floats(size_t(rows) * D, 7, 1.5f);
        std::vector<int> targets;
        for (int k = 0; k < K; ++k) {
            auto t = random_targets(rows, V, 100 + k);
            targets.insert(targets.end(), t.begin(), t.end());
        }
        const BatchStats s = trainer.step(h, targets, AdamW{}, 1, /*update=*/false);
        const auto grads = trainer.gradients();
        for (int k = 0; k < K; ++k) {
            CAPTURE(k);
            const std::vector<int> tk(targets.begin() + k * rows, targets.begin() + (k + 1) * rows);
            int valid = 0;
            for (int t : tk) valid += t >= 0;
            const auto ref = head_forward_backward(heads, k, h, tk, head_weight(k) / valid);
            CHECK(s.valid[k] == valid);
            CHECK(s.loss[k] * head_weight(k) == Approx(ref.loss).epsilon(1e-4));
            CHECK(s.ranks[k] == ref.ranks);
            CHECK(rel_diff(grads[k], ref.grad) < 1e-4);
        }
        CHECK(trainer.heads().heads[1].w2 == heads.heads[1].w2);  // a gradient-only step changes nothing
    }
}

TEST_CASE("GPU AdamW with gradient clipping matches the CPU reference over two steps", "[train]") {
    test::ValidationGuard guard;
    const MedusaHeads heads = random_heads(2, 1, 64, 512, 5);
    GpuHeadTrainer trainer(gpu_context(), heads, 64);
    const auto h = random_floats(size_t(64) * 64, 8, 1.0f);
    auto targets = random_targets(128, 512, 9);
    AdamW opt;
    opt.lr = 0.01f;
    opt.weight_decay = 0.1f;
    opt.clip = 0.05f;  // below the gradient norm, so clipping is exercised
    std::vector<float> p = trainer.flat(0), m(p.size(), 0.0f), v(p.size(), 0.0f);
    for (int step = 1; step <= 2; ++step) {
        CAPTURE(step);
        const BatchStats s = trainer.step(h, targets, opt, step);
        CHECK(s.grad_norm > opt.clip);
        adamw_step(p, trainer.flat(1), m, v, opt, step);
        const auto got = trainer.flat(0);
        CHECK(test::max_abs_diff(got.data(), p.data(), p.size()) < 1e-5f);
        const auto gm = trainer.flat(2);
        CHECK(test::max_abs_diff(gm.data(), m.data(), m.size()) < 1e-6f);
    }
}
