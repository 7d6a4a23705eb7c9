// A short self-distillation run on stories260K: every head's held-out loss falls and its top-1
// rises above the initial heads'; a resumed run ends where an uninterrupted one does; greedy
// Medusa decoding with the trained heads still equals greedy autoregressive decoding.
#include <catch2/catch.hpp>

#include <filesystem>

#include "decode/autoregressive.h"
#include "decode/medusa_decoder.h"
#include "decode/tree_search.h"
#include "gpu_fixture.h"
#include "llm/cpu_reference.h"
#include "llm/gpu_model.h"
#include "model/tokenizer.h"
#include "test_paths.h"
#include "train/head_training.h"
#include "train/seed_prompts.h"

using namespace medusa;
using namespace medusa::train;
using medusa::test::gpu_context;
namespace fs = std::filesystem;

namespace {

struct Fixture {
    ModelFile file = load_model(test::model_path("stories260K.bin"));
    CpuReferenceModel cpu{file};
    DistillData train, held;
    Fixture() {
        Tokenizer tok = Tokenizer::from_file(test::model_path("tok512.model"));
        std::vector<std::vector<int>> prompts;
        for (const auto& p : seed_prompts()) prompts.push_back(tok.encode(p, true));
        DistillOptions o;
        o.sequences = 48;
        o.max_len = 200;
        o.seed = 1;
        train = generate_distill_data(cpu, cpu_hidden_states(cpu), prompts, tok.bos_id(), o);
        o.sequences = 8;
        o.seed = 2;  // held out: other samples
        held = generate_distill_data(cpu, cpu_hidden_states(cpu), prompts, tok.bos_id(), o);
    }
};

Fixture& fixture() {
    static Fixture f;
    return f;
}

TrainOptions short_run() {
    TrainOptions o;
    o.steps = 160;
    o.batch = 128;
    o.lr = 1e-2f;
    o.seed = 3;
    return o;
}

const MedusaHeads& trained_heads() {
    static const MedusaHeads h = [] {
        const MedusaHeads init = MedusaHeads::init_from_model(fixture().file, 4);
        return train_heads(gpu_context(), init, fixture().train, short_run()).heads;
    }();
    return h;
}

}  // namespace

TEST_CASE("a short self-distillation run improves every head on held-out text", "[train]") {
    test::ValidationGuard guard;
    Fixture& f = fixture();
    CHECK(f.train.num_tokens() == 48 * 200);
    CHECK(f.held.hidden.size() == f.held.num_tokens() * 64);
    const MedusaHeads init = MedusaHeads::init_from_model(f.file, 4);
    const HeadAccuracy before = evaluate_heads(gpu_context(), init, f.held);
    const HeadAccuracy after = evaluate_heads(gpu_context(), trained_heads(), f.held);
    for (int k = 0; k < 4; ++k) {
        CAPTURE(k, before.loss[k], after.loss[k], before.top1[k], after.top1[k], after.top5[k]);
        CHECK(after.loss[k] < before.loss[k] - 0.5);
        CHECK(after.top1[k] > before.top1[k] + 0.1);
        CHECK(after.top5[k] > after.top1[k]);
    }
    WARN("held-out top-1 per head: " << after.top1[0] << " " << after.top1[1] << " " << after.top1[2] << " " << after.top1[3]);
}

TEST_CASE("training resumed from a checkpoint ends where an uninterrupted run does", "[train]") {
    test::ValidationGuard guard;
    Fixture& f = fixture();
    const MedusaHeads init = MedusaHeads::init_from_model(f.file, 2);
    TrainOptions o = short_run();
    o.steps = 30;
    const MedusaHeads straight = train_heads(gpu_context(), init, f.train, o).heads;
    const fs::path dir = fs::temp_directory_path() / ("medusa_test_ckpt_" + std::to_string(getpid()));
    fs::remove_all(dir);
    o.checkpoint_dir = dir.string();
    o.stop_at = 17;
    CHECK(train_heads(gpu_context(), init, f.train, o).steps_done == 17);
    o.stop_at = 0;
    o.resume = true;
    const TrainResult resumed = train_heads(gpu_context(), init, f.train, o);
    CHECK(resumed.steps_done == 13);
    for (int k = 0; k < 2; ++k) {
        CHECK(test::max_abs_diff(resumed.heads.heads[k].w2.data(), straight.heads[k].w2.data(), straight.heads[k].w2.size()) < 1e-6f);
        CHECK(test::max_abs_diff(resumed.heads.heads[k].w1[0].data(), straight.heads[k].w1[0].data(), 64 * 64) < 1e-6f);
    }
    fs::remove_all(dir);
}

TEST_CASE("greedy Medusa with trained heads equals greedy autoregressive decoding", "[train]") {
    test::ValidationGuard guard;
    Fixture& f = fixture();
    GpuModel gpu(gpu_context(), f.file);
    const HeadAccuracy acc = evaluate_heads(gpu_context(), trained_heads(), f.held);
    const GreedyTree searched = greedy_tree_search(acc.rank_share, 32, 4);
    for (const auto& choices : {load_tree("mc_sim_7b_63").choices, searched.choices}) {
        const TreeBuffers tree = build_tree_buffers(make_tree(choices));
        for (const std::vector<int>& prompt : {std::vector<int>{1, 403, 407, 261, 378}, std::vector<int>{1, 70, 81}}) {
            CAPTURE(tree.num_nodes, prompt);
            GenerationOptions g;
            g.max_new_tokens = 120;
            g.sampling.temperature = 0;
            std::vector<int> want;
            generate_autoregressive(f.cpu, prompt, g, [&](int t) { return want.push_back(t), true; });
            MedusaOptions o;
            o.max_new_tokens = 120;
            MedusaDecoder d(gpu, f.file, trained_heads(), tree, o);
            std::vector<int> got;
            const GenerationStats s = d.generate(prompt, [&](const StepTrace& st) {
                got.insert(got.end(), st.emitted.begin(), st.emitted.end());
                return true;
            });
            CHECK(got == want);
            CHECK(double(s.new_tokens) / s.forward_passes > 1.3);  // the trained heads do get tokens accepted
        }
    }
}
