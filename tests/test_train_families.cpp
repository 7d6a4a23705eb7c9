// Medusa-2 on every family: tiny models with one family feature each (head size, q/k norms,
// q/k/v biases, post-norms, GeGLU, the embedding scale, the attention scale, sliding windows with
// their own RoPE base and linear scaling on the global layers, partial RoPE with per-pair factors
// and an attention factor), and the Qwen3, Gemma 3 and Phi-3 fixtures (tests/data/arch). For each:
// the double reference's forward is the engine's (CpuReferenceModel) and its gradient matches
// finite differences; the GPU trainer's forward and gradients are the reference's; the merged
// model's file (GGUF of the family, the original's vocabulary carried through) loads to the
// trainer's tuned logits; and `medusa train --objective joint` runs on each fixture end to end.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <functional>
#include <tuple>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "gpu_fixture.h"
#include "gradient_check.h"
#include "llm/cpu_reference.h"
#include "model/dequantize.h"
#include "model/gguf_metadata.h"
#include "model/gguf_writer.h"
#include "model/load_model.h"
#include "model/tokenizer.h"
#include "test_paths.h"
#include "train/backward_reference.h"
#include "train/gpu_joint_trainer.h"
#include "train/joint_reference.h"
#include "train/joint_training.h"
#include "train/lora.h"

using namespace medusa;
using namespace medusa::train;
using medusa::test::gpu_context;
using ref::Vec;
namespace fs = std::filesystem;

namespace {

std::string arch_path(const std::string& name) { return std::string(MEDUSA_SOURCE_DIR) + "/tests/data/arch/" + name; }

fs::path temp_dir(const std::string& what) {
    const fs::path dir = fs::temp_directory_path() / ("medusa2_families_" + what + "_" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

// A tiny model with the features `set` switches on: dim 16, 4 heads of 4 (2 K/V heads), 2 layers.
// Weights are random with the shapes the configuration implies; gains near 1; RoPE factors in
// [1, 3) as rope_freqs where the configuration rotates by factors.
struct Variant {
    const char* name;
    std::function<void(LlamaConfig&)> set;
    bool factors = false;
};

BackboneWeights tiny_model(const Variant& v, uint32_t seed) {
    BackboneWeights w;
    LlamaConfig& c = w.config;
    c.dim = 16, c.hidden_dim = 20, c.n_layers = 2, c.n_heads = 4, c.n_kv_heads = 2, c.vocab_size = 24, c.seq_len = 32;
    c.tied_classifier = false;
    v.set(c);
    validate_config(c, v.name);
    auto rnd = [&](size_t n, float scale) { return test::random_floats(n, seed++, scale); };
    auto gain = [&](size_t n) {
        auto g = rnd(n, 0.2f);
        for (float& x : g) x += 1.0f;
        return g;
    };
    const size_t D = c.dim, Q = c.q_dim(), KV = c.kv_dim(), H = c.hidden_dim, HD = c.head_dim();
    w.tok_embeddings = rnd(size_t(c.vocab_size) * D, 1.0f);
    for (int l = 0; l < c.n_layers; ++l) {
        BackboneWeights::Layer& L = w.layers.emplace_back();
        L.attention_norm = gain(D), L.wq = rnd(Q * D, 0.3f), L.wk = rnd(KV * D, 0.3f), L.wv = rnd(KV * D, 0.3f);
        L.wo = rnd(D * Q, 0.3f), L.ffn_norm = gain(D), L.w1 = rnd(H * D, 0.3f), L.w2 = rnd(D * H, 0.3f);
        L.w3 = rnd(H * D, 0.3f);
        if (c.qkv_bias) L.bq = rnd(Q, 0.3f), L.bk = rnd(KV, 0.3f), L.bv = rnd(KV, 0.3f);
        if (c.arch.qk_norm) L.q_norm = gain(HD), L.k_norm = gain(HD);
        if (c.arch.post_norms) L.post_attention_norm = gain(D), L.post_ffn_norm = gain(D);
    }
    w.norm = gain(D);
    w.output = rnd(size_t(c.vocab_size) * D, 0.5f);
    if (v.factors) {
        w.rope_factors = rnd(size_t(rotated_dims(c) / 2), 1.0f);
        for (float& f : w.rope_factors) f = 2.0f + f;  // [1, 3)
        w.rope_tables = {{"rope_freqs", w.rope_factors}};
    }
    return w;
}

// Each feature alone, and the families' combinations.
const std::vector<Variant>& variants() {
    static const std::vector<Variant> v = {
        {"head size 8 (q twice dim)", [](LlamaConfig& c) { c.head_size = 8; }},
        {"q/k norms", [](LlamaConfig& c) { c.arch.qk_norm = true; }},
        {"q/k/v biases", [](LlamaConfig& c) { c.qkv_bias = true; }},
        {"post-norms", [](LlamaConfig& c) { c.arch.post_norms = true; }},
        {"GeGLU", [](LlamaConfig& c) { c.arch.activation = GateActivation::GeluTanh; }},
        {"embedding scale", [](LlamaConfig& c) { c.arch.embedding_scale = 4.0f; }},
        {"attention scale", [](LlamaConfig& c) { c.arch.attention_scale = 0.9f; }},
        {"sliding window on a local layer, its RoPE base, linear scaling on the global one",
         [](LlamaConfig& c) {
             c.arch.sliding_window = 3, c.arch.local_layers = {1, 0}, c.arch.local_rope_theta = 100.0f;
             c.rope_theta = 1e6f, c.rope_position_scale = 4.0f;
         }},
        {"partial RoPE with factors and an attention factor",
         [](LlamaConfig& c) { c.head_size = 8, c.arch.rope_dims = 4, c.arch.rope_attn_factor = 1.3f; }, true},
        {"Qwen3", [](LlamaConfig& c) { c.arch.family = ModelFamily::Qwen3, c.head_size = 8, c.arch.qk_norm = true; }},
        {"Gemma 3",
         [](LlamaConfig& c) {
             c.arch.family = ModelFamily::Gemma3, c.head_size = 8, c.arch.qk_norm = c.arch.post_norms = true;
             c.arch.activation = GateActivation::GeluTanh, c.arch.embedding_scale = 4.0f;
             c.arch.attention_scale = 0.5f, c.arch.sliding_window = 3, c.arch.local_layers = {1, 0};
             c.rope_theta = 1e6f, c.rope_position_scale = 8.0f;
         }},
        {"Phi-3", [](LlamaConfig& c) { c.arch.family = ModelFamily::Phi3, c.arch.rope_dims = 2, c.arch.rope_attn_factor = 1.1f; }, true},
    };
    return v;
}

MedusaHeads tiny_heads(const LlamaConfig& c, int K, uint32_t seed) {
    MedusaHeads h;
    h.dim = c.dim, h.vocab = c.vocab_size, h.layers = 1, h.source = "test";
    for (int k = 0; k < K; ++k)
        h.heads.push_back({{test::random_floats(size_t(c.dim) * c.dim, seed + 3 * k, 0.3f)},
                           {test::random_floats(c.dim, seed + 3 * k + 1, 0.3f)},
                           test::random_floats(size_t(c.vocab_size) * c.dim, seed + 3 * k + 2, 0.5f)});
    return h;
}

// `sequences` sequences of `len` rows from their start (the last one shorter, padded); tokens below `vocab`.
JointBatch batch(int vocab, int sequences, int len, int K, uint32_t seed) {
    DistillData d;
    d.dim = 1;
    d.seq_start = {0};
    uint32_t x = seed;
    for (int s = 0; s < sequences; ++s) {
        const int n = s + 1 < sequences ? len + 3 : len - 2;
        for (int i = 0; i < n; ++i) {
            x = x * 1664525u + 1013904223u;
            d.tokens.push_back(int((x >> 8) % uint32_t(vocab)));
        }
        d.seq_start.push_back(int(d.tokens.size()));
    }
    std::vector<int> seqs;
    for (int s = 0; s < sequences; ++s) seqs.push_back(s);
    return make_joint_batch(d, seqs, len, K, 0.6f);
}

// LoRA parameters with B non-zero, so every gradient is.
std::vector<float> random_lora(const LlamaConfig& c, const LoraConfig& lc, uint32_t seed) {
    std::vector<float> p = init_lora(c, lc, seed);
    const LoraLayout at(c, lc.rank);
    for (int l = 0; l < c.n_layers; ++l)
        for (int t = 0; t < kLoraTargets; ++t) {
            const auto b = test::random_floats(size_t(lc.rank) * at.out(t), seed * 100 + l * 10 + t, 0.2f);
            std::copy(b.begin(), b.end(), p.begin() + at.b_off(l, t));
        }
    return p;
}

std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

// The engine's logits (the CPU reference) of each sequence of the batch from position 0, padding
// rows included: [rows][vocab].
std::vector<float> engine_logits(const ModelFile& m, const JointBatch& b) {
    CpuReferenceModel cpu(m);
    std::vector<float> out;
    for (int s = 0; s < b.sequences; ++s) {
        const std::vector<int> tokens(b.tokens.begin() + s * b.seq_len, b.tokens.begin() + (s + 1) * b.seq_len);
        cpu.forward(TokenBlock::causal(0, tokens));
        for (int t = 0; t < b.seq_len; ++t) out.insert(out.end(), cpu.logits(t).begin(), cpu.logits(t).end());
    }
    return out;
}

template <class A, class B>
double max_abs_diff(const A& a, const B& b) {
    REQUIRE(a.size() == b.size());
    double m = 0;
    for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(double(a[i]) - double(b[i])));
    return m;
}

double max_abs(const std::vector<double>& v) {
    double m = 0;
    for (double x : v) m = std::max(m, std::abs(x));
    return m;
}

// The GPU trainer's KL, heads' loss and gradients against the double reference, on `base` with
// `lora`; the trainer's base logits against `engine` (the CPU reference's).
void check_gpu_against_reference(const BackboneWeights& base, const LoraConfig& lc, const std::vector<float>& lora,
                                 const MedusaHeads& heads, const JointBatch& b, const std::vector<float>& engine,
                                 double grad_tolerance) {
    const JointReferenceResult want = joint_forward_backward(base, to_double(lora), lc, heads, b);
    GpuJointTrainer trainer(gpu_context(), base, lc, lora, heads, b.sequences, b.seq_len);
    const JointBatchStats s = trainer.step(b, AdamW{}, AdamW{}, 1, /*update=*/false);
    CHECK(s.kl == Approx(want.kl).epsilon(2e-3).margin(1e-5));
    double heads_loss = 0;
    for (int k = 0; k < heads.count(); ++k) heads_loss += b.head_scale[k] * s.head_loss[k] * s.head_valid[k];
    CHECK(heads_loss == Approx(want.heads_loss).epsilon(1e-4));
    const std::vector<float> g = trainer.lora_flat(1);
    const double err = max_abs_diff(g, want.lora_grad), scale = max_abs(want.lora_grad);
    CAPTURE(err, scale);
    CHECK(scale > 1e-3);
    CHECK(err / scale < grad_tolerance);
    const auto hg = trainer.head_gradients();
    for (int k = 0; k < heads.count(); ++k) {
        const auto& wg = want.head_grad[k];
        CHECK(test::max_abs_diff(hg[k].w2.data(), wg.w2.data(), wg.w2.size()) < 1e-4f);
        CHECK(test::max_abs_diff(hg[k].w1[0].data(), wg.w1[0].data(), wg.w1[0].size()) < 1e-4f);
    }
    // The forward without the adapters is the engine's and the reference's.
    trainer.evaluate(b);
    const std::vector<float> base_logits = trainer.logits(true), tuned = trainer.logits(false);
    CHECK(max_abs_diff(base_logits, engine) < 2e-4);
    CHECK(max_abs_diff(base_logits, want.base_logits) < 2e-4);
    CHECK(max_abs_diff(tuned, want.logits) < 2e-4);
}

}  // namespace

TEST_CASE("each family feature: the joint reference is the engine's forward and its gradient matches finite differences",
          "[medusa2][medusa2-families]") {
    for (const Variant& v : variants()) {
        CAPTURE(v.name);
        const BackboneWeights base = tiny_model(v, 10);
        const LoraConfig lc{2, 3.0f};
        const MedusaHeads heads = tiny_heads(base.config, 2, 50);
        const JointBatch b = batch(base.config.vocab_size, 2, 6, 2, 3);
        const auto init = random_lora(base.config, lc, 5);
        Vec lora(init.begin(), init.end());
        const JointReferenceResult r = joint_forward_backward(base, lora, lc, heads, b);
        CHECK(r.kl > 0);
        // The base's forward (the adapters left out) is the engine's.
        const ModelFile m = backbone_model_file(base, v.name);
        CHECK(max_abs_diff(engine_logits(m, b), r.base_logits) < 1e-4);
        auto loss = [&] {
            const JointReferenceResult f = joint_forward_backward(base, lora, lc, heads, b, false);
            return f.kl + f.heads_loss;
        };
        std::vector<size_t> at;
        for (size_t i = 0; i < lora.size(); i += 11) at.push_back(i);
        test::check_fd(lora, r.lora_grad, loss, "LoRA", at, 1e-5);
    }
}

TEST_CASE("each family feature: the GPU joint trainer's forward and gradients are the reference's", "[medusa2][medusa2-families]") {
    test::ValidationGuard guard;
    for (const Variant& v : variants()) {
        CAPTURE(v.name);
        const BackboneWeights base = tiny_model(v, 20);
        const LoraConfig lc{4, 8.0f};
        const MedusaHeads heads = tiny_heads(base.config, 2, 70);
        const JointBatch b = batch(base.config.vocab_size, 2, 6, 2, 9);
        const std::vector<float> engine = engine_logits(backbone_model_file(base, v.name), b);
        check_gpu_against_reference(base, lc, random_lora(base.config, lc, 7), heads, b, engine, 3e-4);
    }
}

TEST_CASE("Medusa-2 on the Qwen3, Gemma 3 and Phi-3 fixtures: the engine's forward, the reference's gradients, a "
          "merged GGUF file that gives the tuned logits",
          "[medusa2][medusa2-families]") {
    test::ValidationGuard guard;
    for (const char* name : {"qwen3-f32.gguf", "gemma3-f32.gguf", "phi3-f32.gguf"}) {
        CAPTURE(name);
        const ModelFile file = load_model(arch_path(name));
        const BackboneWeights base = BackboneWeights::from_model(file);
        const LlamaConfig& c = base.config;
        CHECK_FALSE(llama2c_holds(base));
        if (file.find("rope_factors_long")) CHECK(base.rope_factors == dequantize(file.get("rope_factors_long")));
        const LoraConfig lc{4, 8.0f};
        const MedusaHeads heads = tiny_heads(c, 2, 30);
        const JointBatch b = batch(c.vocab_size, 2, 12, 2, 11);  // past Gemma's window of 8
        const std::vector<float> lora = random_lora(c, lc, 3);
        check_gpu_against_reference(base, lc, lora, heads, b, engine_logits(file, b), 5e-4);

        // The merged model, written as the command writes it, loads to the trainer's tuned logits.
        GpuJointTrainer trainer(gpu_context(), base, lc, lora, heads, b.sequences, b.seq_len);
        trainer.evaluate(b);
        const fs::path dir = temp_dir("merged");
        const std::string path = write_tuned_model(merge_lora(base, lora, lc), file, {file.path, nullptr}, dir.string());
        CHECK(fs::path(path).filename() == "model.gguf");
        const ModelFile tuned = load_model(path);
        CHECK(tuned.config.arch.family == c.arch.family);
        CHECK(describe_features(tuned.config) == describe_features(c));
        CHECK(tuned.embedded_tokenizer == file.embedded_tokenizer);
        CHECK(tuned.chat_template == file.chat_template);
        CHECK(max_abs_diff(engine_logits(tuned, b), trainer.logits(false)) < 2e-4);
        CHECK(max_abs_diff(engine_logits(tuned, b), trainer.logits(true)) > 1e-3);  // it is not the base
        fs::remove_all(dir);
    }
}

namespace {

// A vocabulary-only GGUF file of a byte-level BPE vocabulary ("gpt2": 24 tokens, two merges, the
// qwen2 pre-tokenizer) with a chat template.
void write_bpe_vocabulary(const std::string& path) {
    std::string b;
    auto raw = [&](const void* p, size_t n) { b.append(static_cast<const char*>(p), n); };
    auto u32 = [&](uint32_t v) { raw(&v, 4); };
    auto u64 = [&](uint64_t v) { raw(&v, 8); };
    auto str = [&](const std::string& s) { u64(s.size()), raw(s.data(), s.size()); };
    std::vector<std::string> tokens;
    for (char ch = 'a'; ch <= 't'; ++ch) tokens.push_back(std::string(1, ch));
    for (const char* t : {"\xC4\xA0", "ab", "\xC4\xA0" "a", "<|end|>"}) tokens.push_back(t);  // U+0120 is a space
    u32(0x46554747), u32(3), u64(0), u64(7);
    str("tokenizer.ggml.model"), u32(STRING), str("gpt2");
    str("tokenizer.ggml.pre"), u32(STRING), str("qwen2");
    str("tokenizer.ggml.tokens"), u32(ARRAY), u32(STRING), u64(tokens.size());
    for (const auto& t : tokens) str(t);
    str("tokenizer.ggml.token_type"), u32(ARRAY), u32(I32), u64(tokens.size());
    for (size_t i = 0; i < tokens.size(); ++i) u32(i + 1 < tokens.size() ? 1 : 3);
    str("tokenizer.ggml.merges"), u32(ARRAY), u32(STRING), u64(2);
    str("a b"), str("\xC4\xA0 a");
    str("tokenizer.ggml.eos_token_id"), u32(U32), u32(23);
    str("tokenizer.chat_template"), u32(STRING), str("{% for m in messages %}{{ m.content }}<|end|>{% endfor %}");
    while (b.size() % 32) b.push_back(0);
    FILE* f = std::fopen(path.c_str(), "wb");
    REQUIRE(f);
    std::fwrite(b.data(), 1, b.size(), f);
    std::fclose(f);
}

}  // namespace

TEST_CASE("a tuned model's GGUF carries a byte-level BPE vocabulary through from its original's file", "[medusa2][medusa2-families]") {
    const fs::path dir = temp_dir("bpe");
    const std::string vocab = (dir / "vocab.gguf").string();
    write_bpe_vocabulary(vocab);
    const Tokenizer original = Tokenizer::from_file(vocab);
    REQUIRE(original.byte_level());
    REQUIRE(original.vocab_size() == 24);
    const BackboneWeights w = tiny_model(variants()[9], 40);  // Qwen3-like, 24 tokens
    CHECK_THROWS_WITH(check_tuned_model_writable(w, {"", &original}), Catch::Contains("carried through from a GGUF"));
    CHECK(vocabulary_gguf(ModelFile{}, vocab) == vocab);
    CHECK(vocabulary_gguf(ModelFile{}, test::model_path("tok512.model")).empty());
    ModelFile source;
    source.path = (dir / "source.gguf").string();
    const std::string path = write_tuned_model(w, source, {vocab, &original}, dir.string());
    const ModelFile back = load_model(path);
    REQUIRE(back.embedded_tokenizer.bpe);
    CHECK(back.embedded_tokenizer.bpe->tokens.size() == 24);
    CHECK(back.embedded_tokenizer.bpe->merges == std::vector<std::string>{"a b", "\xC4\xA0 a"});
    CHECK(back.embedded_tokenizer.bpe->pre == "qwen2");
    CHECK(back.embedded_tokenizer.bpe->eos == 23);
    CHECK(back.chat_template == "{% for m in messages %}{{ m.content }}<|end|>{% endfor %}");
    const Tokenizer tuned = Tokenizer::from_serialized(back.embedded_tokenizer, path);
    CHECK(tuned.encode("ab a cab", false) == original.encode("ab a cab", false));
    CHECK(tuned.encode("ab a cab", false).size() == 5);  // ab, Ġa, Ġ, c, ab
    // A vocabulary of another size is refused, naming both files.
    BackboneWeights other = w;
    other.config.vocab_size = 20;
    other.tok_embeddings.resize(20 * 16), other.output.resize(20 * 16);
    CHECK_THROWS_WITH(write_tuned_model(other, source, {vocab, &original}, dir.string()),
                      Catch::Contains("24 tokens") && Catch::Contains("vocabulary of 20"));
    fs::remove_all(dir);
}

namespace {

// `medusa train --objective joint` on a fixture, then greedy generation from the tuned model with
// and without its heads: the same text.
void joint_run_generates(const std::string& fixture) {
    const fs::path dir = temp_dir("cli");
    const std::string model = arch_path(fixture);
    const auto r = test::run_medusa("train --objective joint -m " + model + " --heads 2 --out " + dir.string() +
                                    " --warmup-steps 4 --steps 4 --sequences 8 --max-len 32 --seq-len 16 "
                                    "--batch-seqs 2 --lora-rank 4");
    CAPTURE(r.out, r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.find("step 4/4") != std::string::npos);
    const fs::path tuned = dir / "model.gguf";
    REQUIRE(fs::exists(tuned));
    CHECK_FALSE(fs::exists(dir / "model.bin"));
    const ModelFile original = load_model(model), m = load_model(tuned.string());
    CHECK(m.config.arch.family == original.config.arch.family);
    CHECK(describe_features(m.config) == describe_features(original.config));
    CHECK(m.embedded_tokenizer == original.embedded_tokenizer);
    const auto report = nlohmann::json::parse(test::slurp((dir / "medusa2_report.json").string()));
    CHECK(report["tuned_model"] == tuned.string());
    CHECK(report["kl_nats_per_token"].get<double>() >= 0);
    const auto config = nlohmann::json::parse(test::slurp((dir / "heads" / "config.json").string()));
    CHECK(config["medusa_version"] == 2);
    CHECK(config["original_model"] == model);
    const std::string gen = "generate -m " + tuned.string() + " -p 'Once upon a time' -n 24 --temp 0";
    const auto plain = test::run_medusa(gen);
    const auto medusa = test::run_medusa(gen + " --heads " + (dir / "heads").string() + " --tree chain:2");
    CAPTURE(plain.err, medusa.err);
    REQUIRE(plain.exit_code == 0);
    REQUIRE(medusa.exit_code == 0);
    CHECK(!plain.out.empty());
    CHECK(medusa.out == plain.out);
    CHECK(medusa.err.find("2 heads") != std::string::npos);
    fs::remove_all(dir);
}

}  // namespace

TEST_CASE("medusa train --objective joint on Qwen3 writes a GGUF model and heads that generate runs", "[medusa2][medusa2-families]") {
    joint_run_generates("qwen3-f32.gguf");
}

TEST_CASE("medusa train --objective joint on Gemma 3 writes a GGUF model and heads that generate runs", "[medusa2][medusa2-families]") {
    joint_run_generates("gemma3-f32.gguf");
}

TEST_CASE("medusa train --objective joint on Phi-3 writes a GGUF model and heads that generate runs", "[medusa2][medusa2-families]") {
    joint_run_generates("phi3-f32.gguf");
}

// The other objectives on each family: heads (Medusa-1), an EAGLE layer and an EAGLE-3 drafter
// train from the model's own text, and each drafts exactly plain greedy text.
TEST_CASE("medusa train --objective heads, eagle and eagle3 on Qwen3, Gemma 3 and Phi-3 write drafters that "
          "give plain greedy text",
          "[medusa2-families]") {
    for (const char* fixture : {"qwen3-f32.gguf", "gemma3-f32.gguf", "phi3-f32.gguf"}) {
        const std::string model = arch_path(fixture);
        const std::string gen = "generate -m " + model + " -p 'Once upon a time' -n 40 --temp 0";
        const auto plain = test::run_medusa(gen);
        REQUIRE(plain.exit_code == 0);
        REQUIRE(!plain.out.empty());
        for (const auto& [objective, flags, drafter] : std::vector<std::tuple<std::string, std::string, std::string>>{
                 {"heads", "--heads 2", "--tree chain:2 --heads"},
                 {"eagle", "", "--eagle"},
                 {"eagle3", "--ttt-steps 2", "--eagle"}}) {
            CAPTURE(fixture, objective);
            const fs::path dir = temp_dir(objective);
            const auto trained = test::run_medusa("train --objective " + objective + " -m " + model + " --out " +
                                                  dir.string() + " --steps 3 --sequences 8 --max-len 32 " + flags);
            CAPTURE(trained.err);
            REQUIRE(trained.exit_code == 0);
            const auto drafted = test::run_medusa(gen + " " + drafter + " " + dir.string());
            CAPTURE(drafted.err);
            REQUIRE(drafted.exit_code == 0);
            CHECK(drafted.out == plain.out);
            fs::remove_all(dir);
        }
    }
}
