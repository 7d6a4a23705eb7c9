// Medusa-2's pieces: the LoRA path of the CPU reference against finite differences, the whole
// joint loss's reference gradient against finite differences, the GPU joint trainer against the
// reference, merged weights = base + (alpha/r) B A written as a llama2.c file that loads back,
// and a short joint run on stories260K whose heads beat Medusa-1's on the same text while the
// tuned model stays close to the original.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <functional>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "gpu_fixture.h"
#include "gradient_check.h"
#include "model/load_model.h"
#include "test_paths.h"
#include "trained_heads.h"
#include "llm/cpu_reference.h"
#include "llm/cpu_tree_runner.h"
#include "model/tokenizer.h"
#include "train/seed_prompts.h"
#include "train/backward_reference.h"
#include "train/gpu_joint_trainer.h"
#include "train/joint_reference.h"
#include "train/joint_training.h"
#include "train/lora.h"

using namespace medusa;
using namespace medusa::train;
using medusa::test::gpu_context;
using ref::Vec;
using medusa::test::check_fd;
using medusa::test::dot;
using medusa::test::random_vec;
namespace fs = std::filesystem;

namespace {

std::vector<size_t> every(size_t n, size_t step = 1) {
    std::vector<size_t> v;
    for (size_t i = 0; i < n; i += step) v.push_back(i);
    return v;
}

// A small random Llama: head size 4 (the GPU attention kernel's smallest), grouped K/V heads.
BackboneWeights tiny_model(uint32_t seed) {
    BackboneWeights w;
    LlamaConfig& c = w.config;
    c.dim = 16, c.hidden_dim = 20, c.n_layers = 2, c.n_heads = 4, c.n_kv_heads = 2, c.vocab_size = 24, c.seq_len = 32;
    auto rnd = [&](size_t n, float scale) { return test::random_floats(n, seed++, scale); };
    auto gain = [&](size_t n) {
        auto g = rnd(n, 0.2f);
        for (float& x : g) x += 1.0f;
        return g;
    };
    w.tok_embeddings = rnd(size_t(c.vocab_size) * c.dim, 1.0f);
    for (int l = 0; l < c.n_layers; ++l)
        w.layers.push_back({gain(c.dim), rnd(c.dim * c.dim, 0.3f), rnd(c.kv_dim() * c.dim, 0.3f),
                            rnd(c.kv_dim() * c.dim, 0.3f), rnd(c.dim * c.dim, 0.3f), gain(c.dim),
                            rnd(c.hidden_dim * c.dim, 0.3f), rnd(c.dim * c.hidden_dim, 0.3f),
                            rnd(c.hidden_dim * c.dim, 0.3f)});
    w.norm = gain(c.dim);
    w.output = rnd(size_t(c.vocab_size) * c.dim, 0.5f);
    return w;
}

MedusaHeads tiny_heads(const LlamaConfig& c, int K, uint32_t seed) {
    MedusaHeads h;
    h.dim = c.dim, h.vocab = c.vocab_size, h.layers = 1, h.source = "test";
    for (int k = 0; k < K; ++k)
        h.heads.push_back({{test::random_floats(c.dim * c.dim, seed + 3 * k, 0.3f)},
                           {test::random_floats(c.dim, seed + 3 * k + 1, 0.3f)},
                           test::random_floats(size_t(c.vocab_size) * c.dim, seed + 3 * k + 2, 0.5f)});
    return h;
}

// Two sequences of 5 rows, the second 3 tokens long (padding after it); heads' targets within each.
JointBatch tiny_batch(const LlamaConfig& c, int K, float lambda) {
    DistillData d;
    d.dim = c.dim;
    for (int t : {1, 5, 9, 3, 17, 22, 2, 1, 7, 11, 4}) d.tokens.push_back(t % c.vocab_size);
    d.seq_start = {0, 8, 11};
    return make_joint_batch(d, {0, 1}, 5, K, lambda);
}

// LoRA parameters with B non-zero, so every gradient is.
std::vector<float> random_lora(const LlamaConfig& c, const LoraConfig& lc) {
    std::vector<float> p = init_lora(c, lc, 5);
    const LoraLayout at(c, lc.rank);
    for (int l = 0; l < c.n_layers; ++l)
        for (int t = 0; t < kLoraTargets; ++t) {
            const auto b = test::random_floats(size_t(lc.rank) * at.out(t), 100 + l * 10 + t, 0.2f);
            std::copy(b.begin(), b.end(), p.begin() + at.b_off(l, t));
        }
    return p;
}

}  // namespace

TEST_CASE("the LoRA linear's reference backward matches finite differences", "[medusa2]") {
    const int rows = 3, in = 5, out = 4, rank = 2;
    const double scale = 1.5;
    Vec x = random_vec(rows * in, 1), w = random_vec(out * in, 2), a = random_vec(rank * in, 3),
        b = random_vec(out * rank, 4);
    const Vec dy = random_vec(rows * out, 5);
    const auto g = ref::lora_linear_backward(x, w, a, b, dy, rows, in, out, rank, scale);
    auto loss = [&] { return dot(dy, ref::lora_linear(x, w, a, b, rows, in, out, rank, scale)); };
    check_fd(x, g.dx, loss, "dx", every(x.size()));
    check_fd(a, g.da, loss, "dA", every(a.size()));
    check_fd(b, g.db, loss, "dB", every(b.size()));
    // With B = 0 (LoRA's start) the layer is the base linear.
    const Vec y0 = ref::lora_linear(x, w, a, Vec(b.size(), 0.0), rows, in, out, rank, scale);
    const Vec base = ref::linear(x, w, {}, rows, in, out);
    for (size_t i = 0; i < base.size(); ++i) CHECK(y0[i] == Approx(base[i]).margin(1e-12));
}

TEST_CASE("the joint loss's reference gradient matches finite differences", "[medusa2]") {
    const BackboneWeights base = tiny_model(10);
    const LoraConfig lc{2, 3.0f};
    const MedusaHeads heads = tiny_heads(base.config, 2, 50);
    const JointBatch b = tiny_batch(base.config, 2, 0.5f);
    const auto init = random_lora(base.config, lc);
    Vec lora(init.begin(), init.end());
    const JointReferenceResult r = joint_forward_backward(base, lora, lc, heads, b);
    CHECK(r.kl > 0);
    CHECK(r.heads_loss > 0);
    auto loss = [&] {
        const JointReferenceResult f = joint_forward_backward(base, lora, lc, heads, b, false);
        return f.kl + f.heads_loss;
    };
    check_fd(lora, r.lora_grad, loss, "LoRA", every(lora.size(), 7), 1e-5);
    // Without the adapters' effect (B = 0) the tuned model is the base: KL 0.
    std::vector<double> zero_b(init.begin(), init.end());
    const LoraLayout at(base.config, lc.rank);
    for (int l = 0; l < base.config.n_layers; ++l)
        for (int t = 0; t < kLoraTargets; ++t)
            std::fill_n(zero_b.begin() + at.b_off(l, t), size_t(lc.rank) * at.out(t), 0.0);
    CHECK(std::abs(joint_forward_backward(base, zero_b, lc, heads, b, false).kl) < 1e-12);
}

TEST_CASE("the GPU joint trainer's gradients match the reference", "[medusa2]") {
    test::ValidationGuard guard;
    const BackboneWeights base = tiny_model(20);
    const LoraConfig lc{4, 8.0f};
    const MedusaHeads heads = tiny_heads(base.config, 2, 70);
    const JointBatch b = tiny_batch(base.config, 2, 0.7f);
    const auto lora = random_lora(base.config, lc);
    const JointReferenceResult want =
        joint_forward_backward(base, std::vector<double>(lora.begin(), lora.end()), lc, heads, b);
    GpuJointTrainer trainer(gpu_context(), base, lc, lora, heads, b.sequences, b.seq_len);
    const JointBatchStats s = trainer.step(b, AdamW{}, AdamW{}, 1, /*update=*/false);
    CHECK(s.kl == Approx(want.kl).epsilon(1e-3).margin(1e-5));
    double heads_loss = 0;
    for (int k = 0; k < 2; ++k) heads_loss += b.head_scale[k] * s.head_loss[k] * s.head_valid[k];
    CHECK(heads_loss == Approx(want.heads_loss).epsilon(1e-4));
    const std::vector<float> g = trainer.lora_flat(1);
    double num = 0, den = 0;
    for (size_t i = 0; i < g.size(); ++i) {
        num = std::max(num, std::abs(g[i] - want.lora_grad[i]));
        den = std::max(den, std::abs(want.lora_grad[i]));
    }
    CAPTURE(num, den);
    CHECK(den > 1e-3);
    CHECK(num / den < 2e-4);
    const auto hg = trainer.head_gradients();
    for (int k = 0; k < 2; ++k) {
        const auto& wg = want.head_grad[k];
        CHECK(test::max_abs_diff(hg[k].w2.data(), wg.w2.data(), wg.w2.size()) < 1e-4f);
        CHECK(test::max_abs_diff(hg[k].w1[0].data(), wg.w1[0].data(), wg.w1[0].size()) < 1e-4f);
    }
    // With B = 0 (LoRA's start) the tuned logits are the base's.
    GpuJointTrainer fresh(gpu_context(), base, lc, init_lora(base.config, lc, 1), heads, b.sequences, b.seq_len);
    const JointBatchStats e = fresh.evaluate(b);
    CHECK(std::abs(e.kl) < 1e-5);
    CHECK(fresh.logits(false) == fresh.logits(true));
}

TEST_CASE("merged weights are base + (alpha/r) B A, and the llama2.c file loads as them", "[medusa2]") {
    const BackboneWeights base = tiny_model(30);
    const LoraConfig lc{3, 5.0f};
    const auto lora = random_lora(base.config, lc);
    const BackboneWeights merged = merge_lora(base, lora, lc);
    const LoraLayout at(base.config, lc.rank);
    for (int l = 0; l < base.config.n_layers; ++l)
        for (int t = 0; t < kLoraTargets; ++t) {
            CAPTURE(l, t);
            BackboneWeights b2 = base, m2 = merged;
            const auto& W0 = lora_target_weight(b2, l, t);
            const auto& W1 = lora_target_weight(m2, l, t);
            const int in = at.in(t), out = at.out(t);
            for (int o : {0, out - 1})
                for (int i : {0, in / 2, in - 1}) {
                    double ba = 0;
                    for (int j = 0; j < lc.rank; ++j)
                        ba += double(lora[at.b_off(l, t) + size_t(o) * lc.rank + j]) * lora[at.a_off(l, t) + size_t(j) * in + i];
                    CHECK(W1[size_t(o) * in + i] == Approx(W0[size_t(o) * in + i] + lc.scale() * ba).margin(1e-6));
                }
        }
    CHECK(merged.layers[0].attention_norm == base.layers[0].attention_norm);  // norms and embeddings untouched
    CHECK(merged.tok_embeddings == base.tok_embeddings);

    const fs::path path = fs::temp_directory_path() / ("medusa2_merged_" + std::to_string(getpid()) + ".bin");
    write_llama2c(merged, path.string());
    const ModelFile m = load_model(path.string());
    CHECK(m.format == ModelFormat::Llama2cV0);
    CHECK_FALSE(m.config.tied_classifier);
    const BackboneWeights back = BackboneWeights::from_model(m);
    CHECK(back.layers[1].w2 == merged.layers[1].w2);
    CHECK(back.layers[0].wk == merged.layers[0].wk);
    CHECK(back.output == merged.output);
    CHECK(back.norm == merged.norm);
    fs::remove(path);
}

TEST_CASE("joint training resumed from a checkpoint ends where an uninterrupted run does", "[medusa2]") {
    test::ValidationGuard guard;
    const BackboneWeights base = tiny_model(40);
    const MedusaHeads heads = tiny_heads(base.config, 2, 90);
    DistillData d;
    d.dim = base.config.dim;
    for (int i = 0; i < 60; ++i) d.tokens.push_back((i * 7 + i / 5) % base.config.vocab_size);
    d.seq_start = {0, 12, 30, 41, 60};
    JointOptions o;
    o.lora = {2, 4.0f};
    o.sequences = 2, o.seq_len = 8;
    o.schedule.steps = 8, o.schedule.seed = 4, o.backbone_lr = 1e-2f, o.schedule.lr = 1e-2f;
    const JointResult straight = train_joint(gpu_context(), base, heads, d, {}, o);
    const fs::path dir = fs::temp_directory_path() / ("medusa2_ckpt_" + std::to_string(getpid()));
    fs::remove_all(dir);
    o.schedule.checkpoint_dir = dir.string();
    o.schedule.stop_at = 5;
    CHECK(train_joint(gpu_context(), base, heads, d, {}, o).steps_done == 5);
    o.schedule.stop_at = 0;
    o.schedule.resume = true;
    const JointResult resumed = train_joint(gpu_context(), base, heads, d, {}, o);
    CHECK(resumed.steps_done == 3);
    CHECK(test::max_abs_diff(resumed.lora.data(), straight.lora.data(), straight.lora.size()) < 1e-6f);
    CHECK(test::max_abs_diff(resumed.heads.heads[1].w2.data(), straight.heads.heads[1].w2.data(),
                             straight.heads.heads[1].w2.size()) < 1e-6f);
    CHECK(test::max_abs_diff(straight.lora.data(), init_lora(base.config, o.lora, 4).data(), straight.lora.size()) >
          1e-4f);  // the adapters did move
    fs::remove_all(dir);
}

TEST_CASE("a joint run lowers the heads' loss below Medusa-1's on the same text with the KL bounded", "[medusa2]") {
    test::ValidationGuard guard;
    // Text of stories260K's own (on the CPU reference) and Medusa-1 heads trained on it briefly.
    const ModelFile file = load_model(test::model_path("stories260K.bin"));
    CpuReferenceModel cpu(file);
    const Tokenizer tok = Tokenizer::from_file(test::model_path("tok512.model"));
    std::vector<std::vector<int>> prompts;
    for (const auto& p : seed_prompts()) prompts.push_back(tok.encode(p, true));
    DistillOptions d;
    d.sequences = 24, d.max_len = 64, d.seed = 1;
    CpuTreeRunner writer(cpu);
    const DistillData train = generate_distill_data(writer, cpu_hidden_states(cpu), prompts, tok.bos_id(), d);
    TrainOptions m1 = test::short_training();
    m1.steps = 80;
    MedusaHeads medusa1 = train_heads(gpu_context(), MedusaHeads::init_from_model(file, 4), train, m1).heads;
    medusa1.copy_shared_classifier(file);
    const BackboneWeights base = BackboneWeights::from_model(file);
    // The same batches, steps and heads' learning rate twice: with the backbone frozen (Medusa-1
    // continued) and with the adapters learning (Medusa-2).
    JointOptions o;
    o.sequences = 4, o.seq_len = 32, o.lambda = 1.0f;
    o.schedule.steps = 20, o.schedule.lr = 1e-3f, o.schedule.seed = 5;
    o.backbone_lr = 0.0f;
    const JointResult frozen = train_joint(gpu_context(), base, medusa1, train, {}, o);
    o.backbone_lr = 2e-3f;
    const JointResult joint = train_joint(gpu_context(), base, medusa1, train, {}, o);
    // Scored on the training text, each with its own backbone.
    DistillData some = train;
    some.seq_start.resize(17);  // the first 16 sequences
    some.tokens.resize(some.seq_start.back());
    auto score = [&](const JointResult& r) {
        GpuJointTrainer t(gpu_context(), base, o.lora, r.lora, r.heads, o.sequences, o.seq_len);
        return evaluate_joint(t, some, o.sequences, o.seq_len, 4);
    };
    const JointReport a = score(frozen), b = score(joint);
    CHECK(a.kl < 1e-6);  // lr 0: the adapters stay at B = 0
    double la = 0, lb = 0;
    for (int k = 0; k < 4; ++k) la += head_weight(k) * a.head_loss[k], lb += head_weight(k) * b.head_loss[k];
    CAPTURE(la, lb, b.kl, b.ppl_base, b.ppl_tuned);
    CHECK(lb < la - 0.02);
    CHECK(b.kl > 1e-4);
    CHECK(b.kl < 0.05);
    WARN("heads' loss: Medusa-1 " << la << ", Medusa-2 " << lb << "; KL " << b.kl << " nats/token");
}

TEST_CASE("medusa train-heads --joint writes a tuned model and Medusa-2 heads that generate runs", "[medusa2]") {
    const fs::path dir = fs::temp_directory_path() / ("medusa2_cli_" + std::to_string(getpid()));
    fs::remove_all(dir);
    const std::string model = test::model_path("stories260K.bin"), tok = test::model_path("tok512.model");
    const auto r = test::run_medusa("train-heads --joint -m " + model + " --tokenizer " + tok + " --heads 2 --out " +
                                    dir.string() + " --warmup-steps 20 --steps 6 --sequences 8 --max-len 64" +
                                    " --seq-len 32 --batch-seqs 2 --lora-rank 4");
    CAPTURE(r.out, r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.find("step 6/6") != std::string::npos);
    const ModelFile tuned = load_model((dir / "model.bin").string());
    CHECK(tuned.format == ModelFormat::Llama2cV0);
    CHECK(tuned.config.dim == 64);
    const auto config = nlohmann::json::parse(test::slurp((dir / "heads" / "config.json").string()));
    CHECK(config["medusa_version"] == 2);
    CHECK(config["original_model"] == model);
    CHECK(config["medusa_num_heads"] == 2);
    const auto report = nlohmann::json::parse(test::slurp((dir / "medusa2_report.json").string()));
    CHECK(report["kl_nats_per_token"].get<double>() >= 0);
    CHECK(report["medusa2_top1"].size() == 2);
    // Greedy Medusa-2 decoding is the tuned model's own greedy text.
    const std::string gen = "generate -m " + (dir / "model.bin").string() + " --tokenizer " + tok +
                            " -p 'Once upon a time' -n 40 --temp 0";
    const auto plain = test::run_medusa(gen);
    const auto medusa = test::run_medusa(gen + " --heads " + (dir / "heads").string() + " --tree chain:2");
    REQUIRE(plain.exit_code == 0);
    REQUIRE(medusa.exit_code == 0);
    CHECK(medusa.out == plain.out);
    CHECK(medusa.err.find("2 heads") != std::string::npos);
    fs::remove_all(dir);
}
