// EAGLE-3 training with training-time test: the double-precision TTT loss drafts as the CPU
// EAGLE-3 layer does, the GPU trainer's loss equals it and its gradients (through every unrolled
// step, fc, the three norms and the draft head) match finite differences of it, and training
// steps lower the loss.
#include <catch2/catch.hpp>

#include <cmath>

#include "gpu_fixture.h"
#include "model/dequantize.h"
#include "test_paths.h"
#include "train/eagle3_reference.h"
#include "train/gpu_eagle3_trainer.h"

using namespace medusa;
using namespace medusa::train;
using medusa::test::gpu_context;

namespace {

LlamaConfig tiny_target() {
    LlamaConfig c;
    c.dim = 8, c.hidden_dim = 12, c.n_heads = 2, c.n_kv_heads = 1, c.vocab_size = 11, c.n_layers = 4;
    return c;
}

// A layer with every weight random (norm gains near 1), reading `layers`, drafting 7 of 11 tokens.
EagleLayer random_eagle3(std::vector<int> layers, uint32_t seed) {
    const LlamaConfig c = tiny_target();
    const auto classifier = test::random_floats(size_t(c.vocab_size) * c.dim, seed, 1.0f);
    const std::vector<float> ones(size_t(c.dim), 1.0f);
    EagleLayer e = EagleLayer::init_eagle3(c, std::move(layers), {0, 2, 3, 5, 6, 8, 10}, ones, classifier, seed);
    for (auto* w : {&e.fc_w, &e.wq, &e.wk, &e.wv, &e.wo, &e.w_gate, &e.w_up, &e.w_down, &e.draft_head})
        *w = test::random_floats(w->size(), ++seed, 0.5f);
    for (auto* g : {&e.post_norm, &e.input_norm, &e.hidden_norm, &e.final_norm})
        for (float& x : *g) x = 1.0f + test::random_floats(1, ++seed, 0.3f)[0];
    return e;
}

// `sequences` runs of seq_len rows unrolled `steps` times; the last `pad` rows of the second
// sequence have no target, and step k weighs 0.8^k.
Eagle3Batch random_batch(const EagleLayer& e, int sequences, int seq_len, int steps, int pad, uint32_t seed) {
    Eagle3Batch b;
    b.rows = sequences * seq_len, b.seq_len = seq_len, b.steps = steps;
    const size_t R = b.rows, d = e.dim;
    b.features = test::random_floats(R * e.feature_dim(), seed, 1.0f);
    b.embeddings = test::random_floats(size_t(steps) * R * d, seed + 1, 1.0f);
    b.target_hidden = test::random_floats(size_t(steps) * R * d, seed + 2, 1.5f);
    for (int k = 0; k < steps; ++k)
        for (size_t r = 0; r < R; ++r) {
            b.positions.push_back(int(r % seq_len) + k);
            const bool padding = r >= size_t(seq_len) && int(r % seq_len) >= seq_len - pad - k;
            b.row_weight.push_back(padding ? 0.0f : std::pow(0.8f, float(k)) / float(R));
        }
    return b;
}

std::vector<float> target_head_of(const EagleLayer& e, uint32_t seed) {
    return test::random_floats(size_t(e.draft_vocab()) * e.dim, seed, 1.0f);
}

}  // namespace

TEST_CASE("the EAGLE-3 training-time-test loss at step k is the CPU layer's draft k+1 levels deep", "[eagle3-train]") {
    // Row i of step k is a chain drafted from position i with the true tokens: the CPU EAGLE-3
    // layer run as drafting runs it (context up to i, then its own outputs) gives the same
    // distributions.
    const ModelFile file = load_model(test::model_path("stories260K.bin"));
    const LlamaConfig& c = file.config;
    const auto classifier = test::random_floats(size_t(c.vocab_size) * c.dim, 3, 0.3f);
    const std::vector<float> ones(size_t(c.dim), 1.0f);
    std::vector<int> draft;
    for (int i = 0; i < c.vocab_size; i += 3) draft.push_back(i);
    EagleLayer e = EagleLayer::init_eagle3(c, {0, 2, 4}, draft, ones, classifier, 4);
    for (auto* w : {&e.fc_w, &e.wq, &e.wk, &e.wv, &e.wo, &e.w_gate, &e.w_up, &e.w_down})
        *w = test::random_floats(w->size(), uint32_t(w->size()), 0.2f);
    const int L = 6, K = 3, d = c.dim;
    std::vector<int> tokens;
    for (int t = 0; t < L + K + 1; ++t) tokens.push_back((37 * t + 5) % c.vocab_size);
    const std::vector<float> embeddings = dequantize(file.get("tok_embeddings"));
    Eagle3Batch b;
    b.rows = L, b.seq_len = L, b.steps = K;
    b.features = test::random_floats(size_t(L) * e.feature_dim(), 7, 1.0f);
    b.target_hidden = test::random_floats(size_t(K) * L * d, 8, 1.0f);
    for (int k = 0; k < K; ++k)
        for (int i = 0; i < L; ++i) {
            const int t = tokens[size_t(i + 1 + k)];
            b.embeddings.insert(b.embeddings.end(), embeddings.begin() + size_t(t) * d, embeddings.begin() + size_t(t + 1) * d);
            b.positions.push_back(i + k);
            b.row_weight.push_back(1.0f);
        }
    std::vector<float> target_head;
    for (int t : draft) target_head.insert(target_head.end(), classifier.begin() + size_t(t) * d, classifier.begin() + size_t(t + 1) * d);
    const auto ref = eagle3_ttt_loss(e, target_head, b);

    // The same cross-entropies from the CPU layer drafting chains.
    CpuEagleModel cpu(e, file, 64);
    std::vector<double> ce(K, 0.0);
    std::vector<float> row(d);
    for (int i = 0; i < L; ++i) {
        for (int j = 0; j <= i; ++j) {  // the true context: step 0 of rows 0..i
            e.fuses() ? cpu.fuse({&b.features[size_t(j) * e.feature_dim()], size_t(e.feature_dim())}, row.data())
                      : void(std::copy_n(&b.features[size_t(j) * d], d, row.begin()));
            cpu.forward(TokenBlock::causal(j, {tokens[size_t(j + 1)]}), row);
        }
        for (int k = 0; k < K; ++k) {
            if (k > 0) {
                const auto out = cpu.output(0);
                std::vector<float> h(out.begin(), out.end());
                cpu.forward(TokenBlock::causal(i + k, {tokens[size_t(i + 1 + k)]}), h);
            }
            const auto logits = cpu.logits(0);
            // Target distribution over the draft tokens.
            std::vector<double> tl(draft.size()), dl(draft.size());
            for (size_t v = 0; v < draft.size(); ++v) {
                double s = 0;
                for (int x = 0; x < d; ++x) s += double(target_head[v * d + x]) * b.target_hidden[(size_t(k) * L + i) * d + x];
                tl[v] = s;
                dl[v] = logits[size_t(draft[v])];
            }
            auto lse = [](const std::vector<double>& z) {
                double m = *std::max_element(z.begin(), z.end()), s = 0;
                for (double x : z) s += std::exp(x - m);
                return m + std::log(s);
            };
            const double tz = lse(tl), dz = lse(dl);
            for (size_t v = 0; v < draft.size(); ++v) ce[size_t(k)] -= std::exp(tl[v] - tz) * (dl[v] - dz);
        }
    }
    for (int k = 0; k < K; ++k) {
        CAPTURE(k, ce[size_t(k)], ref[size_t(k)].unweighted);
        CHECK(ref[size_t(k)].rows == L);
        CHECK(std::abs(ce[size_t(k)] - ref[size_t(k)].unweighted) < 1e-3 * std::abs(ce[size_t(k)]));
    }
}

TEST_CASE("the GPU EAGLE-3 trainer's loss and gradients match the reference", "[eagle3-train][gpu]") {
    for (const std::vector<int>& layers : {std::vector<int>{0, 1, 3}, std::vector<int>{2}}) {
        CAPTURE(layers);
        EagleLayer e = random_eagle3(layers, 30);
        const std::vector<float> head = target_head_of(e, 41);
        const Eagle3Batch b = random_batch(e, 2, 5, 3, 2, 42);
        GpuEagle3Trainer gpu(gpu_context(), e, head, 2, 5, 3);
        const Eagle3BatchStats s = gpu.step(b, AdamW{}, 1, /*update=*/false);
        const auto ref = eagle3_ttt_loss(e, head, b);
        CHECK(std::abs(s.weighted_loss - total_loss(ref)) < 1e-4 * total_loss(ref));
        for (int k = 0; k < 3; ++k) {
            CHECK(s.rows[size_t(k)] == ref[size_t(k)].rows);
            CHECK(s.top1[size_t(k)] == ref[size_t(k)].top1);
        }
        const EagleLayer g = gpu.gradients();
        // Central differences of the double-precision loss, at each tensor's largest gradients
        // and a few others.
        const std::vector<std::pair<std::vector<float>*, const std::vector<float>*>> tensors = {
            {&e.fc_w, &g.fc_w},           {&e.wq, &g.wq},
            {&e.wk, &g.wk},               {&e.wv, &g.wv},
            {&e.wo, &g.wo},               {&e.post_norm, &g.post_norm},
            {&e.w_gate, &g.w_gate},       {&e.w_up, &g.w_up},
            {&e.w_down, &g.w_down},       {&e.input_norm, &g.input_norm},
            {&e.hidden_norm, &g.hidden_norm}, {&e.final_norm, &g.final_norm},
            {&e.draft_head, &g.draft_head}};
        double scale = 0;
        for (const auto& [w, gw] : tensors)
            for (float x : *gw) scale = std::max(scale, double(std::abs(x)));
        REQUIRE(scale > 0);
        int checked = 0;
        for (const auto& [w, gw] : tensors) {
            if (w->empty()) continue;  // fc of a single layer
            REQUIRE(gw->size() == w->size());
            std::vector<size_t> at;
            at.push_back(size_t(std::max_element(gw->begin(), gw->end(), [](float a, float b) { return std::abs(a) < std::abs(b); }) - gw->begin()));
            for (size_t i = 0; i < 3; ++i) at.push_back((i * 7919 + 13) % w->size());
            for (size_t i : at) {
                const float keep = (*w)[i];
                const float up = keep + 1e-2f, down = keep - 1e-2f;
                (*w)[i] = up;
                const double lu = total_loss(eagle3_ttt_loss(e, head, b));
                (*w)[i] = down;
                const double ld = total_loss(eagle3_ttt_loss(e, head, b));
                (*w)[i] = keep;
                const double fd = (lu - ld) / (double(up) - double(down));
                CAPTURE(i, fd, (*gw)[i], scale);
                CHECK(std::abs(fd - (*gw)[i]) < 2e-3 * scale + 2e-2 * std::abs(fd));
                ++checked;
            }
        }
        CHECK(checked >= 48);
    }
}

TEST_CASE("GPU EAGLE-3 training steps lower the training-time-test loss", "[eagle3-train][gpu]") {
    const EagleLayer e = random_eagle3({0, 1, 3}, 50);
    const std::vector<float> head = target_head_of(e, 51);
    const Eagle3Batch b = random_batch(e, 2, 6, 4, 1, 52);
    GpuEagle3Trainer gpu(gpu_context(), e, head, 2, 6, 4);
    AdamW opt;
    opt.lr = 2e-2f;
    const double before = gpu.evaluate(b).weighted_loss;
    for (int step = 1; step <= 60; ++step) gpu.step(b, opt, step);
    const Eagle3BatchStats after = gpu.evaluate(b);
    CAPTURE(before, after.weighted_loss);
    CHECK(after.weighted_loss < 0.75 * before);
    // The trained parameters give the reference the loss the trainer reports.
    CHECK(std::abs(total_loss(eagle3_ttt_loss(gpu.layer(), head, b)) - after.weighted_loss) < 1e-4 * before);
}
