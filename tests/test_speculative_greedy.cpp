// Every drafter through the one verifier: with greedy acceptance each emits plain greedy
// decoding's text token for token, to the end of the context, on every shipped model file; a
// drafter that runs on the device keeps each step to one queue submit.
#include <catch2/catch.hpp>

#include "decode/controlled_drafter.h"
#include "decode/draft_model_drafter.h"
#include "decode/medusa_drafter.h"
#include "decode/ngram_drafter.h"
#include "decode_support.h"
#include "model/load_model.h"
#include "setup/cost_measurement.h"
#include "greedy_reference.h"
#include "llm/cpu_reference.h"
#include "llm/cpu_tree_runner.h"
#include "llm/gpu_model.h"
#include "llm/gpu_tree_runner.h"
#include "test_paths.h"

using namespace medusa;
using namespace medusa::test;

namespace {

// Submits per step: one verify pass, plus a draft model's forwards (catch-up, then one per
// drafted level after the first). Under the step controller a draft model may catch up on
// several steps it did not draft, in more than one forward.
bool submits_as_expected(const StepTrace& s) {
    if (s.drafter != DrafterKind::DraftModel) return s.submits == 1;
    int depth = 0;
    for (const auto& n : s.nodes) depth = std::max(depth, n.depth);
    return s.control ? s.submits >= depth + 1 : s.submits == depth + 1;
}

// Verification that costs nothing: the controller drafts the largest shapes it can.
CostModel free_verification() {
    CostModel m;
    m.verify = CostCurve({{1, 1.0}, {128, 1.0}});
    return m;
}

void check_drafter(const std::string& what, TreeRunner& runner, Drafter& drafter, const std::vector<int>& prompt,
                   const std::vector<int>& expected, float penalty = 1.0f) {
    INFO(what << ", prompt of " << prompt.size());
    DecodeOptions o = greedy_options(100000);
    o.sampling.repeat_penalty = penalty;
    GenerationStats stats;
    std::vector<StepTrace> steps;
    const auto got = decode(runner, drafter, o, prompt, &stats, &steps);
    CHECK(got == expected);
    CHECK(stats.stop_reason == StopReason::Context);
    int bad_submits = 0;
    for (const auto& s : steps) bad_submits += !submits_as_expected(s);
    CHECK(bad_submits == 0);
    CHECK(stats.new_tokens == int(expected.size()));
}

// Plain, Medusa (untrained and random heads), a draft model (chain and tree) and n-gram lookup
// on `file`, each against the plain greedy loop of the same engine, to the end of the context:
// from two prompts of different lengths, or from the first alone.
void check_every_drafter(const std::string& name, const std::string& draft_name, int prompts = 2) {
    test::ValidationGuard guard;
    GpuTarget target(name), draft_target(draft_name);
    auto& [file, gpu, runner] = target;
    GpuModel& draft = draft_target.model;
    const MedusaHeads init = MedusaHeads::init_from_model(file, 3);
    const MedusaHeads noise = random_heads(file, 3, 17);
    const TreeBuffers tree = build_tree_buffers(load_tree("dense:2,2,2"), 10);
    for (int p = 0; p < prompts; ++p) {
        const std::vector<int>& prompt = kStoryPrompts[p];
        CAPTURE(name);
        const int n = file.config.seq_len - int(prompt.size()) + 1;
        const auto expected = greedy_ar(gpu, prompt, 100000);
        REQUIRE(int(expected.size()) == n);
        NoDrafter plain;
        check_drafter("plain", runner, plain, prompt, expected);
        MedusaDrafter medusa_init(runner, file, init, tree);
        check_drafter("medusa, init heads", runner, medusa_init, prompt, expected);
        MedusaDrafter medusa_noise(runner, file, noise, tree);
        check_drafter("medusa, random heads", runner, medusa_noise, prompt, expected);
        DraftModelDrafter chain(draft, {.gamma = 4, .branches = 1, .adaptive_gamma = true});
        check_drafter("draft chain of " + draft_name, runner, chain, prompt, expected);
        DraftModelDrafter tree_drafter(draft, {.gamma = 3, .branches = 2});
        check_drafter("draft tree of " + draft_name, runner, tree_drafter, prompt, expected);
        NgramDrafter ngram({.max_tokens = 8, .branches = 2});
        check_drafter("n-gram", runner, ngram, prompt, expected);
        // The step controller over them: each drafter alone, and auto choosing among them, with
        // this device's measured costs and with verification free (the largest shapes).
        const CostModel measured = measure_costs(runner, 16);
        for (Drafter* d : std::initializer_list<Drafter*>{&medusa_noise, &chain, &tree_drafter, &ngram}) {
            ControlledDrafter controlled({d}, measured);
            check_drafter(std::string("controlled ") + drafter_kind_name(d->kind()), runner, controlled, prompt, expected);
        }
        ControlledDrafter auto_measured({&ngram, &medusa_init, &chain}, measured);
        check_drafter("auto, measured costs", runner, auto_measured, prompt, expected);
        ControlledDrafter auto_free({&ngram, &medusa_noise, &tree_drafter}, free_verification(), {.learn_timing = false});
        check_drafter("auto, free verification", runner, auto_free, prompt, expected);
    }
}

}  // namespace

TEST_CASE("every drafter gives plain greedy text to the end of the context: stories260K.bin", "[speculative]") {
    check_every_drafter("stories260K.bin", "stories260K_q80.bin");
}
TEST_CASE("every drafter gives plain greedy text to the end of the context: stories260K_q80.bin", "[speculative]") {
    check_every_drafter("stories260K_q80.bin", "llama2xs.bin");
}
TEST_CASE("every drafter gives plain greedy text to the end of the context: llama2xs.bin", "[speculative]") {
    check_every_drafter("llama2xs.bin", "stories260K_q80.bin");
}
// The f32 GGUF files hold the .bin files' weights as they are (the same floats, checked when this
// was cut to save CI time), so their runs would repeat the .bin cases' arithmetic; the other
// types change it, and the .bin cases have shown both prompt lengths, so one prompt each.
TEST_CASE("every drafter gives plain greedy text to the end of the context: stories260K GGUF files", "[speculative]") {
    check_every_drafter("gguf/stories260K-f16.gguf", "stories260K_q80.bin", 1);
}
TEST_CASE("every drafter gives plain greedy text to the end of the context: llama2xs GGUF files", "[speculative]") {
    for (const char* f : {"gguf/llama2xs-f16.gguf", "gguf/llama2xs-q8_0.gguf", "gguf/llama2xs-q4_0.gguf"})
        check_every_drafter(f, "stories260K_q80.bin", 1);
}

TEST_CASE("Medusa's 64-node tree shrinks to the room left and reaches the context's end", "[speculative]") {
    // A 64-node tree used to stop ~25 tokens before plain decoding on llama2xs's 256-token context.
    test::ValidationGuard guard;
    GpuTarget target("llama2xs.bin");
    auto& [file, gpu, runner] = target;
    const MedusaHeads init = MedusaHeads::init_from_model(file, 4);
    const TreeBuffers tree = build_tree_buffers(load_tree("mc_sim_7b_63"), 10);
    MedusaDrafter medusa(runner, file, init, tree);
    const auto expected = greedy_ar(gpu, kStoryPrompts[0], 100000);
    check_drafter("medusa mc_sim_7b_63", runner, medusa, kStoryPrompts[0], expected);
}

TEST_CASE("the CPU reference engine runs every drafter to the same greedy text", "[speculative]") {
    ModelFile file = load_model(model_path("stories260K.bin"));
    ModelFile draft_file = load_model(model_path("stories260K_q80.bin"));
    CpuReferenceModel cpu(file), draft(draft_file);
    CpuTreeRunner runner(cpu);
    const auto& prompt = kStoryPrompts[2];
    const auto expected = greedy_ar(cpu, prompt, 100000);
    const MedusaHeads noise = random_heads(file, 3, 5);
    MedusaDrafter medusa(runner, file, noise, build_tree_buffers(load_tree("dense:3,2,1"), 10));
    check_drafter("medusa on the CPU", runner, medusa, prompt, expected);
    DraftModelDrafter chain(draft, {.gamma = 5});
    check_drafter("draft chain on the CPU", runner, chain, prompt, expected);
    NgramDrafter ngram({});
    check_drafter("n-gram on the CPU", runner, ngram, prompt, expected);
}

TEST_CASE("a repetition penalty shapes greedy decoding alike in every mode", "[speculative]") {
    test::ValidationGuard guard;
    GpuTarget target("stories260K.bin"), draft_target("stories260K_q80.bin");
    auto& [file, gpu, runner] = target;
    GpuModel& draft = draft_target.model;
    const auto& prompt = kStoryPrompts[0];
    const auto expected = greedy_ar(gpu, prompt, 100000, 1.5f, 64);
    REQUIRE(expected != greedy_ar(gpu, prompt, 100000));  // the penalty changes the text, so the check means something
    NoDrafter plain;
    check_drafter("plain, penalised", runner, plain, prompt, expected, 1.5f);
    const MedusaHeads init = MedusaHeads::init_from_model(file, 2);
    MedusaDrafter medusa(runner, file, init, build_tree_buffers(load_tree("dense:3,3"), 10));
    check_drafter("medusa, penalised", runner, medusa, prompt, expected, 1.5f);
    DraftModelDrafter chain(draft, {.gamma = 4});
    check_drafter("draft chain, penalised", runner, chain, prompt, expected, 1.5f);
    NgramDrafter ngram({});
    check_drafter("n-gram, penalised", runner, ngram, prompt, expected, 1.5f);
}
