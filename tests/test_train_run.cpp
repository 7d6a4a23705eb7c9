// A short self-distillation run on stories260K: every head's held-out loss falls and its top-1
// rises above the initial heads'; a resumed run ends where an uninterrupted one does; greedy
// Medusa decoding with the trained heads still equals greedy autoregressive decoding.
#include <catch2/catch.hpp>

#include <filesystem>

#include "decode/medusa_drafter.h"
#include "decode_support.h"
#include "trained_heads.h"
#include "greedy_reference.h"
#include "llm/cpu_tree_runner.h"
#include "llm/gpu_tree_runner.h"
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

using Fixture = test::DistillFixture;
Fixture& fixture() { return test::distill_fixture(); }
TrainOptions short_run() { return test::short_training(); }
const MedusaHeads& trained_heads() { return test::trained_heads(); }

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
    GpuTreeRunner runner(gpu);
    const HeadAccuracy acc = evaluate_heads(gpu_context(), trained_heads(), f.held);
    const GreedyTree searched = greedy_tree_search(acc.rank_share, 32, 4);
    for (const auto& choices : {load_tree("mc_sim_7b_63").choices, searched.choices}) {
        const TreeBuffers tree = build_tree_buffers(make_tree(choices));
        for (const std::vector<int>& prompt : {std::vector<int>{1, 403, 407, 261, 378}, std::vector<int>{1, 70, 81}}) {
            CAPTURE(tree.num_nodes, prompt);
            const std::vector<int> want = test::greedy_ar(f.cpu, prompt, 120);
            MedusaDrafter medusa(runner, f.file, trained_heads(), tree);
            GenerationStats s;
            CHECK(test::decode(runner, medusa, test::greedy_options(120), prompt, &s) == want);
            CHECK(s.tokens_per_step() > 1.3);  // the trained heads do get tokens accepted
        }
    }
}
