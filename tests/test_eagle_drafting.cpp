// EAGLE drafting on the one pipeline: the GPU layer reads the target's features as the CPU
// reference does, greedy EAGLE (dynamic EAGLE-2 and static EAGLE-1 trees) gives plain greedy
// decoding's text to the end of the context, each level costs one submit, and speculative
// sampling with EAGLE's drafts keeps the target's distribution.
#include <catch2/catch.hpp>

#include "decode/eagle_drafter.h"
#include "decode/tree.h"
#include "decode_support.h"
#include "greedy_reference.h"
#include "llm/cpu_reference.h"
#include "llm/cpu_tree_runner.h"
#include "llm/eagle_layer.h"
#include "test_paths.h"

using namespace medusa;
using namespace medusa::test;

namespace {

EagleLayer random_eagle(const LlamaConfig& cfg, uint64_t seed) {
    EagleLayer e = EagleLayer::init(cfg, seed);
    uint32_t s = uint32_t(seed) * 31;
    for (auto* w : {&e.wq, &e.wk, &e.wv, &e.wo, &e.w_gate, &e.w_up, &e.w_down}) *w = random_floats(w->size(), s++, 0.2f);
    // fc keeps passing the feature through, plus some of the token's embedding.
    auto noise = random_floats(e.fc_w.size(), s++, 0.05f);
    for (size_t i = 0; i < noise.size(); ++i) e.fc_w[i] += noise[i];
    return e;
}

}  // namespace

TEST_CASE("the GPU EAGLE layer predicts what the CPU reference predicts from the target's features", "[eagle]") {
    ValidationGuard guard;
    GpuTarget gpu("stories260K.bin");
    CpuReferenceModel cpu_model(gpu.file);
    CpuTreeRunner cpu(cpu_model);
    const EagleLayer layer = random_eagle(gpu.file.config, 4);
    auto g = gpu.runner.eagle_runner(gpu.file, layer), c = cpu.eagle_runner(gpu.file, layer);
    const std::vector<int> prompt = {1, 403, 407, 261, 378, 30, 99};
    gpu.runner.prefill(0, prompt);
    cpu.prefill(0, prompt);
    // Pairs (f_i, t_{i+1}) over the prompt, then a level of two drafts fed by the last prediction.
    std::vector<int> source;
    for (int i = 0; i + 1 < int(prompt.size()); ++i) source.push_back(EagleRunner::target_slot(i));
    const TokenBlock sync = TokenBlock::causal(0, {prompt.begin() + 1, prompt.end()});
    for (EagleRunner* r : {g.get(), c.get()}) r->run(sync, source);
    for (int t = 0; t < sync.size(); ++t)
        CHECK(max_abs_diff(g->logits(t).data(), c->logits(t).data(), 512) < 2e-3f);
    TokenBlock level = TokenBlock::causal(6, {50, 60});
    level.positions = {6, 6};
    level.mask = {{1, 0}, {0, 1}};
    const int last = sync.size() - 1;
    for (EagleRunner* r : {g.get(), c.get()}) r->run(level, std::vector<int>{last, last});
    for (int t = 0; t < 2; ++t) CHECK(max_abs_diff(g->logits(t).data(), c->logits(t).data(), 512) < 2e-3f);
    CHECK(g->rows() == 8);
}

TEST_CASE("greedy EAGLE gives plain greedy text to the end of the context, EAGLE-1 and EAGLE-2 trees", "[eagle]") {
    ValidationGuard guard;
    for (const char* name : {"stories260K.bin", "llama2xs.bin"}) {
        GpuTarget target(name);
        CAPTURE(name);
        const auto& prompt = kStoryPrompts[0];
        const auto expected = greedy_ar(target.model, prompt, 100000);
        REQUIRE(int(expected.size()) == target.file.config.seq_len - int(prompt.size()) + 1);
        const EagleLayer layers[] = {EagleLayer::init(target.file.config, 1), random_eagle(target.file.config, 9)};
        for (const EagleLayer& layer : layers) {
            auto runner = target.runner.eagle_runner(target.file, layer);
            for (bool dynamic : {true, false}) {
                CAPTURE(dynamic, layer.wq[0]);
                EagleOptions o;
                o.top_k = 4;
                o.depth = 4;
                o.nodes = 20;
                if (!dynamic) o.choices = load_tree("mc_sim_7b_63").choices;
                EagleDrafter eagle(*runner, o);
                GenerationStats stats;
                std::vector<StepTrace> steps;
                CHECK(decode(target.runner, eagle, greedy_options(100000), prompt, &stats, &steps) == expected);
                CHECK(stats.stop_reason == StopReason::Context);
                // A step: the catch-up run, a run per level below the first, the verify pass. EAGLE-2
                // may drop the deepest levels it ran when it keeps the likeliest nodes.
                int bad = 0;
                for (const StepTrace& s : steps) {
                    int depth = 0;
                    for (const auto& n : s.nodes) depth = std::max(depth, n.depth);
                    if (depth == 0) bad += s.submits != 1;
                    else if (dynamic) bad += s.submits < depth + 1 || s.submits > o.depth + 1;
                    else bad += s.submits != depth + 1;
                }
                CHECK(bad == 0);
            }
        }
    }
}
