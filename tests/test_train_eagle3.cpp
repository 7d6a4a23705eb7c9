// EAGLE-3 training with training-time test: the double-precision TTT loss drafts as the CPU
// EAGLE-3 layer does, the GPU trainer's loss equals it and its gradients (through every unrolled
// step, fc, the three norms and the draft head) match finite differences of it, training steps
// lower the loss; the draft vocabulary and the batches; the published layout written and read
// back; and `medusa train-eagle --eagle3` end to end (resume, drafting with the result, bad flags).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "gpu_fixture.h"
#include "llm/eagle_layer_io.h"
#include "model/dequantize.h"
#include "model/load_model.h"
#include "model/safetensors_file.h"
#include "test_paths.h"
#include "train/eagle3_reference.h"
#include "train/eagle3_training.h"
#include "train/gpu_eagle3_trainer.h"

using namespace medusa;
using namespace medusa::train;
using medusa::test::gpu_context;
namespace fs = std::filesystem;

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

TEST_CASE("the draft vocabulary is the text's most frequent tokens", "[eagle3-train]") {
    DistillData d;
    d.dim = 1;
    // Two sequences; each one's first token (BOS) is not counted.
    d.tokens = {1, 5, 5, 5, 3, 3, 7, 1, 5, 3, 9};
    d.seq_start = {0, 7, 11};
    d.hidden.assign(d.tokens.size(), 0.0f);
    const DraftVocabulary two = choose_draft_vocabulary(d, 12, 2);
    CHECK(two.tokens == std::vector<int>{3, 5});  // 5 four times, 3 three times
    CHECK(two.coverage == Approx(7.0 / 9.0));
    const DraftVocabulary four = choose_draft_vocabulary(d, 12, 4);
    CHECK(four.tokens == std::vector<int>{3, 5, 7, 9});  // 7 and 9 once each
    const DraftVocabulary six = choose_draft_vocabulary(d, 12, 6);
    CHECK(six.tokens == std::vector<int>{0, 1, 3, 5, 7, 9});  // unseen tokens fill by id
    CHECK(six.coverage == Approx(1.0));
    const DraftVocabulary covering = choose_draft_vocabulary(d, 12);  // 99%: all four seen tokens
    CHECK(covering.tokens == std::vector<int>{3, 5, 7, 9});
    CHECK_THROWS(choose_draft_vocabulary(d, 12, 13));
}

TEST_CASE("an EAGLE-3 batch pairs step k of row i with t_{i+1+k} and the target's state there", "[eagle3-train]") {
    const LlamaConfig c = tiny_target();
    EagleTarget target;
    target.dim = c.dim, target.vocab = c.vocab_size;
    target.embeddings = test::random_floats(size_t(c.vocab_size) * c.dim, 61, 1.0f);
    target.lm_head = test::random_floats(size_t(c.vocab_size) * c.dim, 62, 1.0f);
    const EagleLayer e = random_eagle3({0, 1, 3}, 63);  // drafts 0 2 3 5 6 8 10
    DistillData d;
    d.dim = c.dim;
    d.tokens = {1, 4, 2, 9, 3, 1, 6};
    d.seq_start = {0, 5, 7};
    d.hidden = test::random_floats(d.tokens.size() * c.dim, 64, 1.0f);
    d.feature_dim = e.feature_dim();
    d.features = test::random_floats(d.tokens.size() * d.feature_dim, 65, 1.0f);
    const std::vector<int> top = target_top_tokens(d, target);
    const int L = 5, K = 3;
    const Eagle3Batch b = make_eagle3_batch(d, target, e, top, {0, 1, -1}, L, K, 0.5f);
    REQUIRE(b.rows == 3 * L);
    int first_step_rows = 0;
    for (int r = 0; r < b.rows; ++r) first_step_rows += r < 4 || r == L;  // rows whose t_{i+1} exists
    for (int s = 0; s < 3; ++s)
        for (int i = 0; i < L; ++i)
            for (int k = 0; k < K; ++k) {
                const int len = s == 0 ? 5 : s == 1 ? 2 : 0, start = s == 1 ? 5 : 0;
                const size_t r = size_t(s * L + i), kr = size_t(k) * b.rows + r;
                CAPTURE(s, i, k);
                CHECK(b.positions[kr] == i + k);
                if (i < len && k == 0)
                    CHECK(std::equal(&b.features[r * e.feature_dim()], &b.features[(r + 1) * e.feature_dim()],
                                     &d.features[size_t(start + i) * e.feature_dim()]));
                if (i + 1 + k >= len) {
                    CHECK(b.row_weight[kr] == 0.0f);
                    continue;
                }
                const size_t p = size_t(start + i + 1 + k);
                CHECK(std::equal(&b.embeddings[kr * c.dim], &b.embeddings[(kr + 1) * c.dim],
                                 &target.embeddings[size_t(d.tokens[p]) * c.dim]));
                CHECK(std::equal(&b.target_hidden[kr * c.dim], &b.target_hidden[(kr + 1) * c.dim], &d.hidden[p * c.dim]));
                const bool drafts = std::count(e.draft_to_target.begin(), e.draft_to_target.end(), top[p]) > 0;
                CHECK(b.row_weight[kr] == Approx(drafts ? std::pow(0.5, k) / first_step_rows : 0.0));
            }
}

TEST_CASE("an EAGLE-3 layer written in the published layout reads back the same", "[eagle3-train]") {
    const ModelFile file = load_model(test::model_path("stories260K.bin"));
    const LlamaConfig& c = file.config;
    const EagleTarget target = EagleTarget::from(file);
    std::vector<int> draft;
    for (int i = 1; i < c.vocab_size; i += 2) draft.push_back(i);
    for (const std::vector<int>& layers : {std::vector<int>{4, 0, 2}, std::vector<int>{2}}) {
        EagleLayer e = EagleLayer::init_eagle3(c, layers, draft, target.final_norm, target.lm_head, 9);
        for (auto* w : {&e.fc_w, &e.wq, &e.wk, &e.wv, &e.input_norm, &e.hidden_norm})
            *w = test::random_floats(w->size(), uint32_t(w->size()), 0.5f);
        const fs::path dir = fs::temp_directory_path() / ("medusa_eagle3_layout_" + std::to_string(getpid()));
        fs::remove_all(dir);
        save_eagle_layer(e, dir.string(), file.path);
        const EagleLayer back = load_eagle_layer(dir.string(), c);
        CHECK(back.eagle3());
        CHECK(back.target_layers == layers);
        CHECK(back.draft_to_target == draft);
        CHECK(back.fuses() == (layers.size() > 1));
        for (auto [a, b] : {std::pair{&e.fc_w, &back.fc_w}, {&e.wq, &back.wq}, {&e.wk, &back.wk}, {&e.wv, &back.wv},
                            {&e.wo, &back.wo}, {&e.w_down, &back.w_down}, {&e.input_norm, &back.input_norm},
                            {&e.hidden_norm, &back.hidden_norm}, {&e.final_norm, &back.final_norm},
                            {&e.draft_head, &back.draft_head}})
            CHECK(*a == *b);
        // The published names and index types, as SafeAILab's code reads them.
        const SafetensorsFile f = SafetensorsFile::open((dir / "model.safetensors").string());
        REQUIRE(f.find_index("d2t"));
        CHECK(f.find_index("d2t")->type == IndexTensor::Type::I64);
        CHECK(f.find_index("d2t")->values()[3] == draft[3] - 3);
        REQUIRE(f.find_index("t2d"));
        CHECK(f.find_index("t2d")->type == IndexTensor::Type::Bool);
        CHECK(f.find_index("t2d")->values()[1] == 1);
        CHECK(f.find_index("t2d")->values()[2] == 0);
        for (const char* name : {"midlayer.hidden_norm.weight", "midlayer.input_layernorm.weight", "norm.weight",
                                 "lm_head.weight", "midlayer.self_attn.q_proj.weight"})
            CHECK(f.find(name));
        CHECK((f.find("fc.weight") != nullptr) == (layers.size() > 1));
        const auto config = nlohmann::json::parse(test::slurp((dir / "config.json").string()));
        CHECK(config["architectures"][0] == "LlamaForCausalLMEagle3");
        CHECK(config["draft_vocab_size"] == draft.size());
        CHECK(config["eagle_config"]["eagle_aux_hidden_state_layer_ids"] == layers);
        fs::remove_all(dir);
    }
}

TEST_CASE("medusa train-eagle --eagle3 trains a drafter that generate drafts with, and resumes", "[eagle3-train]") {
    const fs::path dir = fs::temp_directory_path() / ("medusa_train_eagle3_cli_" + std::to_string(getpid()));
    fs::remove_all(dir);
    const std::string model = test::model_path("stories260K.bin"), tok = test::model_path("tok512.model");
    const std::string common = "train-eagle --eagle3 -m " + model + " --tokenizer " + tok + " --out " + dir.string() +
                               " --sequences 8 --max-len 48 --layers 1,3 --draft-vocab 200 --ttt-steps 3 --depth 3"
                               " --eval-positions 50";
    const auto first = test::run_medusa(common + " --steps 3");
    CAPTURE(first.out, first.err);
    REQUIRE(first.exit_code == 0);
    const auto r = test::run_medusa(common + " --steps 6 --resume");
    CAPTURE(r.out, r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.find("at step 4") != std::string::npos);
    CHECK(r.err.find("draft vocabulary: 200 of 512 tokens") != std::string::npos);
    CHECK(r.err.find("step 6/6") != std::string::npos);
    const ModelFile file = load_model(model);
    const EagleLayer e = load_eagle_layer(dir.string(), file.config);
    CHECK(e.target_layers == std::vector<int>{1, 3});
    CHECK(e.draft_vocab() == 200);
    const auto acc = nlohmann::json::parse(test::slurp((dir / "accuracy.json").string()));
    CHECK(acc["ttt_trained"]["top1"].size() == 3);
    CHECK(acc["draft_on_greedy_text"]["top1"].size() == 3);
    // generate drafts with it, and greedy output is plain greedy output.
    const std::string gen = "generate -m " + model + " --tokenizer " + tok + " --temp 0 -n 40 --prompt \"Once upon a time\"";
    const auto plain = test::run_medusa(gen);
    const auto drafted = test::run_medusa(gen + " --eagle " + dir.string());
    CAPTURE(drafted.err);
    REQUIRE(drafted.exit_code == 0);
    CHECK(drafted.out == plain.out);
    CHECK(drafted.err.find("EAGLE-3 from target layers 1, 3") != std::string::npos);

    // Bad values are refused with one line before any work.
    for (const auto& [flags, says] : std::vector<std::pair<std::string, std::string>>{
             {" --layers 1,9", "--layers: '9' is not a layer of the target (0 to 4)"},
             {" --layers 1,1", "--layers names layer 1 twice"},
             {" --draft-vocab 600", "--draft-vocab must be 1 to the model's vocabulary of 512"},
             {" --ttt-steps 0", "--ttt-steps must be 1 to 32"},
             {" --noise 0.1", "--noise"}}) {
        const auto bad = test::run_medusa("train-eagle --eagle3 -m " + model + " --tokenizer " + tok + " --out " +
                                          (dir / "bad").string() + flags);
        CAPTURE(flags, bad.err);
        CHECK(bad.exit_code != 0);
        CHECK(bad.err.find(says) != std::string::npos);
        CHECK(!fs::exists(dir / "bad" / "model.safetensors"));
    }
    fs::remove_all(dir);
}
