// EAGLE layer training: the training reference computes what the CPU EAGLE layer computes, its
// gradients match finite differences, the GPU trainer's gradients and AdamW (0.9, 0.95, clip 0.5)
// match the reference, a short self-distillation run on stories260K drafts better than the
// initial layer (drafting from its own features), a resumed run ends where an uninterrupted one
// does, and `medusa train-eagle` writes a layer in EAGLE's layout with its accuracy report.
#include <catch2/catch.hpp>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "gpu_fixture.h"
#include "llm/eagle_layer_io.h"
#include "model/load_model.h"
#include "test_paths.h"
#include "train/eagle_draft_accuracy.h"
#include "train/eagle_flat_params.h"
#include "train/eagle_training.h"
#include "train/gpu_eagle_trainer.h"
#include "trained_heads.h"

using namespace medusa;
using namespace medusa::train;
using medusa::test::gpu_context;
namespace fs = std::filesystem;

namespace {

EagleLayer random_layer(EagleLayer e, uint32_t seed, float scale = 0.3f) {
    for (auto* w : {&e.fc_w, &e.fc_b, &e.wq, &e.wk, &e.wv, &e.wo, &e.w_gate, &e.w_up, &e.w_down})
        *w = test::random_floats(w->size(), seed++, scale);
    for (float& g : e.post_norm) g = 1.0f + test::random_floats(1, seed++, 0.3f)[0];
    return e;
}

EagleLayer tiny_layer() {
    LlamaConfig c;
    c.dim = 8, c.hidden_dim = 12, c.n_heads = 2, c.n_kv_heads = 1, c.vocab_size = 11;
    return random_layer(EagleLayer::init(c, 1), 5, 0.5f);
}

// Random sequences (the last `pad` rows of each sequence after the first are padding).
EagleBatch random_batch(int sequences, int seq_len, int dim, int pad, uint32_t seed) {
    EagleBatch b;
    b.rows = sequences * seq_len;
    b.seq_len = seq_len;
    b.input = test::random_floats(size_t(b.rows) * 2 * dim, seed, 1.0f);
    b.target = test::random_floats(size_t(b.rows) * dim, seed + 1, 1.5f);
    int valid = 0;
    for (int r = 0; r < b.rows; ++r) {
        b.positions.push_back(r % seq_len + 2);
        const bool padding = r >= seq_len && r % seq_len >= seq_len - pad;
        b.row_weight.push_back(padding ? 0.0f : 1.0f);
        valid += !padding;
    }
    for (float& w : b.row_weight) w /= float(valid);
    return b;
}

double rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
    REQUIRE(a.size() == b.size());
    double num = 0, den = 1e-12;
    for (size_t i = 0; i < a.size(); ++i) {
        num = std::max(num, double(std::abs(a[i] - b[i])));
        den = std::max(den, double(std::abs(b[i])));
    }
    return num / den;
}

fs::path temp_dir(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / (name + "_" + std::to_string(getpid()));
    fs::remove_all(d);
    return d;
}

EagleTrainOptions short_eagle_run() {
    EagleTrainOptions o;
    o.steps = 40;
    o.batch = 2;
    o.lr = 1e-2f;
    o.seed = 3;
    o.log_every = 1000;
    return o;
}

const EagleLayer& trained_layer() {
    static const EagleLayer e = [] {
        const auto& f = test::distill_fixture();
        return train_eagle(gpu_context(), EagleLayer::init(f.file.config, 1), EagleTarget::from(f.file), f.train,
                           short_eagle_run())
            .layer;
    }();
    return e;
}

}  // namespace

TEST_CASE("the EAGLE training reference computes what the CPU EAGLE layer computes", "[eagle-train]") {
    const ModelFile file = load_model(test::model_path("stories260K.bin"));
    const EagleLayer e = random_layer(EagleLayer::init(file.config, 1), 11);
    const EagleTarget target = EagleTarget::from(file);
    const int T = 20, d = file.config.dim;
    std::vector<int> tokens;
    for (int t = 0; t < T; ++t) tokens.push_back((37 * t + 5) % file.config.vocab_size);
    const auto features = test::random_floats(size_t(T) * d, 12, 1.0f);
    EagleBatch b = random_batch(1, T, d, 0, 13);
    for (int t = 0; t < T; ++t) {
        std::copy_n(&target.embeddings[size_t(tokens[t]) * d], d, &b.input[size_t(t) * 2 * d]);
        std::copy_n(&features[size_t(t) * d], d, &b.input[size_t(t) * 2 * d + d]);
        b.positions[t] = t;
    }
    const auto ref = eagle_forward_backward(e, target.lm_head, target.vocab, b, {}, false);
    CpuEagleModel cpu(e, file, 64);
    cpu.forward(TokenBlock::causal(0, tokens), features);
    double worst = 0, scale = 0;
    for (int t = 0; t < T; ++t)
        for (int i = 0; i < d; ++i) {
            worst = std::max(worst, std::abs(double(cpu.output(t)[i]) - ref.out[size_t(t) * d + i]));
            scale = std::max(scale, std::abs(ref.out[size_t(t) * d + i]));
        }
    CAPTURE(worst, scale);
    CHECK(scale > 0.5);
    CHECK(worst < 1e-5 * scale);
}

TEST_CASE("the EAGLE training reference's gradients match finite differences", "[eagle-train]") {
    EagleLayer e = tiny_layer();
    const int vocab = 11;
    const auto lm = test::random_floats(size_t(vocab) * e.dim, 21, 1.0f);
    const EagleBatch b = random_batch(2, 5, e.dim, 2, 22);
    const EagleLossWeights w;
    const auto r = eagle_forward_backward(e, lm, vocab, b, w);
    CHECK(r.feature_loss > 0);
    CHECK(r.token_loss > 0);
    auto loss = [&] {
        const auto l = eagle_forward_backward(e, lm, vocab, b, w, false);
        return l.feature_loss + l.token_loss;
    };
    const std::vector<std::pair<std::vector<float>*, const std::vector<float>*>> tensors = {
        {&e.fc_w, &r.grad.fc_w}, {&e.fc_b, &r.grad.fc_b},           {&e.wq, &r.grad.wq},
        {&e.wk, &r.grad.wk},     {&e.wv, &r.grad.wv},               {&e.wo, &r.grad.wo},
        {&e.post_norm, &r.grad.post_norm}, {&e.w_gate, &r.grad.w_gate}, {&e.w_up, &r.grad.w_up},
        {&e.w_down, &r.grad.w_down}};
    int t = 0;
    for (auto [param, grad] : tensors) {
        for (size_t i = 0; i < param->size(); ++i) {
            const float keep = (*param)[i];
            const float up_v = keep + 1e-3f, down_v = keep - 1e-3f;
            (*param)[i] = up_v;
            const double up = loss();
            (*param)[i] = down_v;
            const double down = loss();
            (*param)[i] = keep;
            const double fd = (up - down) / (double(up_v) - double(down_v));
            CAPTURE(t, i, fd, (*grad)[i]);
            CHECK(std::abs(fd - (*grad)[i]) < 1e-5 + 1e-3 * std::abs(fd));
        }
        ++t;
    }
}

TEST_CASE("GPU EAGLE training steps match the CPU reference: loss, gradients, AdamW (0.9, 0.95) with clipping",
          "[eagle-train]") {
    test::ValidationGuard guard;
    const ModelFile file = load_model(test::model_path("stories260K.bin"));
    const EagleLayer e = random_layer(EagleLayer::init(file.config, 1), 31, 0.1f);
    const EagleTarget target = EagleTarget::from(file);
    // 3 x 37 rows: off the 64-wide GEMM tiles and the QUAD GEMM's multiples of 4; 2 x 32: on them.
    const auto [sequences, seq_len] = GENERATE(std::pair{3, 37}, std::pair{2, 32});
    CAPTURE(sequences, seq_len);
    const EagleBatch b = random_batch(sequences, seq_len, e.dim, 9, 32);
    GpuEagleTrainer trainer(gpu_context(), e, target.lm_head, target.vocab, sequences, seq_len);
    AdamW opt;
    opt.lr = 0.01f;
    opt.beta1 = 0.9f;
    opt.beta2 = 0.95f;
    opt.clip = 0.05f;  // below the gradient norm, so clipping is exercised
    const EagleBatchStats s = trainer.step(b, opt, 1, /*update=*/false);
    const auto ref = eagle_forward_backward(e, target.lm_head, target.vocab, b, {});
    CHECK(s.valid == sequences * seq_len - (sequences - 1) * 9);
    CHECK(s.feature_loss == Approx(ref.feature_loss).epsilon(1e-4));
    CHECK(0.1 * s.token_loss == Approx(ref.token_loss).epsilon(1e-4));
    for (int r = 0; r < b.rows; ++r)
        if (b.row_weight[r] > 0) CHECK(s.ranks[r] == ref.rank[r]);
    const EagleLayer g = trainer.gradients();
    CHECK(rel_diff(g.fc_w, ref.grad.fc_w) < 1e-4);
    CHECK(rel_diff(g.fc_b, ref.grad.fc_b) < 1e-4);
    CHECK(rel_diff(g.wq, ref.grad.wq) < 1e-4);
    CHECK(rel_diff(g.wk, ref.grad.wk) < 1e-4);
    CHECK(rel_diff(g.wv, ref.grad.wv) < 1e-4);
    CHECK(rel_diff(g.wo, ref.grad.wo) < 1e-4);
    CHECK(rel_diff(g.post_norm, ref.grad.post_norm) < 1e-4);
    CHECK(rel_diff(g.w_gate, ref.grad.w_gate) < 1e-4);
    CHECK(rel_diff(g.w_up, ref.grad.w_up) < 1e-4);
    CHECK(rel_diff(g.w_down, ref.grad.w_down) < 1e-4);
    CHECK(trainer.layer().wq == e.wq);  // a gradient-only step changes nothing
    const EagleTrainOptions defaults;  // EAGLE's optimizer settings are the trainer's defaults
    CHECK(defaults.beta1 == 0.9f);
    CHECK(defaults.beta2 == 0.95f);
    CHECK(defaults.clip == 0.5f);

    std::vector<float> p = pack_eagle_layer(e), m(p.size(), 0.0f), v(p.size(), 0.0f);
    for (int step = 1; step <= 2; ++step) {
        CAPTURE(step);
        const EagleBatchStats st = trainer.step(b, opt, step);
        CHECK(st.grad_norm > opt.clip);
        adamw_step(p, trainer.flat(1), m, v, opt, step);
        const auto got = trainer.flat(0);
        CHECK(test::max_abs_diff(got.data(), p.data(), p.size()) < 1e-5f);
        const auto gv = trainer.flat(3);
        CHECK(test::max_abs_diff(gv.data(), v.data(), v.size()) < 1e-7f);
    }
}

TEST_CASE("a short EAGLE self-distillation run drafts better than the initial layer, from its own features",
          "[eagle-train]") {
    test::ValidationGuard guard;
    auto& f = test::distill_fixture();
    const EagleTarget target = EagleTarget::from(f.file);
    const EagleLayer init = EagleLayer::init(f.file.config, 1);
    const auto before = eagle_draft_accuracy(init, f.file, f.held, 3, 600);
    const auto after = eagle_draft_accuracy(trained_layer(), f.file, f.held, 3, 600);
    const auto tf = evaluate_eagle_teacher_forced(gpu_context(), trained_layer(), target, f.held);
    const auto tf_init = evaluate_eagle_teacher_forced(gpu_context(), init, target, f.held);
    CAPTURE(before.top1, after.top1, after.conditional, after.accepted, tf.top1, tf_init.top1);
    CHECK(after.starts == 600);
    CHECK(after.top1[0] > before.top1[0] + 0.2);
    CHECK(after.top1[1] > before.top1[1]);
    CHECK(after.accepted[1] <= after.accepted[0]);
    CHECK(tf.feature_loss < tf_init.feature_loss);
    CHECK(tf.token_loss < tf_init.token_loss);
    // Depth 1 reads the target's own feature and token, teacher-forced or not: the GPU's figure
    // over all held-out positions and the CPU's over the first 600 are close.
    CHECK(std::abs(tf.top1 - after.top1[0]) < 0.1);
    WARN("held-out draft top-1 per depth: " << after.top1[0] << " " << after.top1[1] << " " << after.top1[2]);
}

TEST_CASE("EAGLE training resumed from a checkpoint ends where an uninterrupted run does", "[eagle-train]") {
    test::ValidationGuard guard;
    auto& f = test::distill_fixture();
    const EagleTarget target = EagleTarget::from(f.file);
    const EagleLayer init = EagleLayer::init(f.file.config, 1);
    EagleTrainOptions o = short_eagle_run();
    o.steps = 8;
    o.noise = 0.2f;  // noise is drawn per (seed, step), so it resumes too
    const EagleLayer straight = train_eagle(gpu_context(), init, target, f.train, o).layer;
    const fs::path dir = temp_dir("medusa_eagle_ckpt");
    o.checkpoint_dir = dir.string();
    o.stop_at = 5;
    CHECK(train_eagle(gpu_context(), init, target, f.train, o).steps_done == 5);
    CHECK(fs::exists(dir / "model.safetensors"));
    o.stop_at = 0;
    o.resume = true;
    const EagleTrainResult resumed = train_eagle(gpu_context(), init, target, f.train, o);
    CHECK(resumed.steps_done == 3);
    const auto a = pack_eagle_layer(resumed.layer), b = pack_eagle_layer(straight);
    CHECK(test::max_abs_diff(a.data(), b.data(), a.size()) == 0.0f);
    CHECK(pack_eagle_layer(init) != b);
    fs::remove_all(dir);
}

TEST_CASE("medusa train-eagle writes a layer in EAGLE's layout and its accuracy per depth", "[eagle-train]") {
    const fs::path dir = temp_dir("medusa_train_eagle_cli");
    const std::string model = test::model_path("stories260K.bin");
    const auto r = test::run_medusa("train-eagle -m " + model + " --tokenizer " + test::model_path("tok512.model") +
                                    " --out " + dir.string() + " --steps 10 --sequences 8 --max-len 64 --depth 3");
    CAPTURE(r.out, r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.find("step 10/10") != std::string::npos);
    const ModelFile file = load_model(model);
    const EagleLayer e = load_eagle_layer(dir.string(), file.config);
    CHECK(e.dim == 64);
    const auto acc = nlohmann::json::parse(test::slurp((dir / "accuracy.json").string()));
    CHECK(acc["trained"]["draft"]["top1"].size() == 3);
    CHECK(acc["trained"]["draft_on_greedy_text"]["top1"].size() == 3);
    CHECK(fs::exists(dir / "heldout_greedy_data.safetensors"));
    CHECK(acc["train_wall_s"].get<double>() > 0);
    fs::remove_all(dir);
}
