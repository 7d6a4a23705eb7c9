// Medusa drafting on the GPU: the heads' candidates, the compacted cache, typical acceptance.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>

#include "decode/medusa_drafter.h"
#include "decode/speculative_decoder.h"
#include "decode_support.h"
#include "greedy_reference.h"
#include "llm/cpu_reference.h"
#include "llm/cpu_tree_runner.h"
#include "llm/gpu_model.h"
#include "llm/gpu_tree_runner.h"
#include "test_paths.h"

using namespace medusa;
using namespace medusa::test;

TEST_CASE("the compacted cache continues exactly like a sequence recomputed from scratch", "[medusa]") {
    test::ValidationGuard guard;
    // Also with the block's parameters copied to device memory after the heads wrote their
    // candidates into them (discrete GPUs' way; here host memory is the device's).
    for (HostBufferAccess access : {HostBufferAccess::Auto, HostBufferAccess::DeviceCopies}) {
    CAPTURE(access == HostBufferAccess::DeviceCopies);
    GpuTarget target("stories260K.bin", {.host_buffers = access});
    auto& [file, gpu, runner] = target;
    CpuReferenceModel cpu(file);
    const MedusaHeads heads = random_heads(file, 4, 3);
    MedusaDrafter medusa(runner, file, heads, build_tree_buffers(load_tree("mc_sim_7b_63"), 10));
    for (int n : {2, 9, 30}) {
        CAPTURE(n);
        std::vector<int> seq = kStoryPrompts[0];
        const auto out = decode(runner, medusa, greedy_options(n), seq);
        seq.insert(seq.end(), out.begin(), out.end());
        // The last emitted token is not in the cache yet: decode it plainly from the compacted cache.
        gpu.forward(TokenBlock::causal(int(seq.size()) - 1, {seq.back()}));
        cpu.forward(TokenBlock::causal(0, seq));
        auto a = gpu.logits(0), b = cpu.logits(int(seq.size()) - 1);
        CHECK(test::max_abs_diff(a.data(), b.data(), a.size()) < 2e-3f);
    }
    }
}

TEST_CASE("a Medusa generation's steps build no pipeline: making the drafter and decoder built them", "[medusa]") {
    test::ValidationGuard guard;
    GpuTarget target("stories260K.bin");
    auto& [file, gpu, runner] = target;
    const MedusaHeads heads = random_heads(file, 4, 5);
    // A prompt of two tokens prefills one, as the root-only first step runs one.
    const std::vector<int> prompt = {kStoryPrompts[0][0], kStoryPrompts[0][1]};
    for (const char* tree : {"mc_sim_7b_63", "chain:2"}) {
        CAPTURE(tree);
        MedusaDrafter medusa(runner, file, heads, build_tree_buffers(load_tree(tree), 10));
        SpeculativeDecoder decoder(runner, medusa, greedy_options(100));
        const uint64_t built = gpu.context().pipelines_built();
        int steps = 0, trees = 0;
        decoder.generate(prompt, [&](const StepTrace& st) {
            trees += st.nodes.size() > 1 ? 1 : 0;
            return ++steps < 6;  // well before the tree shrinks for the last tokens
        });
        CHECK(trees >= 4);
        CHECK(gpu.context().pipelines_built() == built);
    }
}

TEST_CASE("typical acceptance at temperature near 0 behaves as greedy", "[medusa]") {
    test::ValidationGuard guard;
    GpuTarget target("stories260K.bin");
    auto& [file, gpu, runner] = target;
    CpuReferenceModel cpu(file);
    const MedusaHeads heads = MedusaHeads::init_from_model(file, 4);
    MedusaDrafter medusa(runner, file, heads, build_tree_buffers(load_tree("mc_sim_7b_63"), 10));
    DecodeOptions o = greedy_options(80);
    o.rule = AcceptRule::Typical;
    o.sampling.temperature = 1e-4f;
    CHECK(decode(runner, medusa, o, kStoryPrompts[0]) == greedy_ar(cpu, kStoryPrompts[0], 80));
}

TEST_CASE("typical acceptance adds the greedy token after the accepted guesses, as the reference does", "[medusa]") {
    // FasterDecoding/Medusa with fast=True: candidates pass on p > min(eps, delta exp(-H)); the next
    // token is argmax(logits) at the last accepted position, not a draw.
    test::ValidationGuard guard;
    GpuTarget target("stories260K.bin");
    auto& [file, gpu, runner] = target;
    CpuReferenceModel cpu(file);
    const MedusaHeads heads = random_heads(file, 3, 11);
    MedusaDrafter medusa(runner, file, heads, build_tree_buffers(load_tree("dense:4,2,2"), 10));
    DecodeOptions o;
    o.max_new_tokens = 60;
    o.rule = AcceptRule::Typical;
    o.sampling = {1.0f, 1.0f, 9};
    std::vector<StepTrace> steps;
    decode(runner, medusa, o, kStoryPrompts[1], nullptr, &steps);
    REQUIRE(steps.size() > 5);
    std::vector<int> seq = kStoryPrompts[1];
    int accepted = 0;
    for (const StepTrace& s : steps) {
        // The sequence before the bonus: everything so far and the accepted guesses.
        std::vector<int> before = seq;
        before.insert(before.end(), s.emitted.begin(), s.emitted.end() - 1);
        cpu.forward(TokenBlock::causal(0, before));
        auto l = cpu.logits(int(before.size()) - 1);
        CHECK(s.bonus == int(std::max_element(l.begin(), l.end()) - l.begin()));
        for (size_t i = 1; i < s.nodes.size(); ++i)
            CHECK(s.nodes[i].passes == (s.nodes[i].model_prob > s.nodes[i].limit));
        accepted += s.accepted;
        seq.insert(seq.end(), s.emitted.begin(), s.emitted.end());
    }
    CHECK(accepted > 0);  // the check covered bonuses after accepted guesses too
}

TEST_CASE("every tree node carries its own head's candidate of its rank", "[medusa]") {
    test::ValidationGuard guard;
    GpuTarget target("stories260K.bin");
    auto& [file, gpu, runner] = target;
    // Init heads all repeat the model's classifier on the same hidden state, so head k's rank-r
    // guess is the same token for every k: along a chain every node must hold the rank-0 token,
    // and a dense tree's nodes of one rank must agree across depths.
    const MedusaHeads heads = MedusaHeads::init_from_model(file, 4);
    for (const char* spec : {"chain:4", "dense:2,2,2", "mc_sim_7b_63"}) {
        CAPTURE(spec);
        MedusaDrafter medusa(runner, file, heads, build_tree_buffers(load_tree(spec), 10));
        std::vector<StepTrace> steps;
        decode(runner, medusa, greedy_options(12), kStoryPrompts[0], nullptr, &steps);
        int trees = 0;
        for (const StepTrace& st : steps) {
            if (st.nodes.size() < 2) continue;
            ++trees;
            std::map<int, int> token_of_rank;
            for (size_t i = 1; i < st.nodes.size(); ++i) {
                auto [it, fresh] = token_of_rank.emplace(st.nodes[i].rank, st.nodes[i].token);
                CHECK(it->second == st.nodes[i].token);
            }
        }
        CHECK(trees > 0);
    }
}

TEST_CASE("the first tree's candidates are the CPU reference heads' top-k, on both engines", "[medusa]") {
    // Step 1 verifies the prompt's last token alone; its hidden state, which the CPU reference
    // also has, is what step 2's heads read: every node at depth d and rank r must hold head
    // d-1's rank-r token with its probability.
    test::ValidationGuard guard;
    GpuTarget target("stories260K.bin");
    auto& [file, gpu, gpu_runner] = target;
    CpuReferenceModel cpu(file), cpu_engine(file);
    CpuTreeRunner cpu_runner(cpu_engine);
    const std::vector<int>& prompt = kStoryPrompts[0];
    cpu.forward(TokenBlock::causal(0, prompt));
    const auto h = cpu.hidden(int(prompt.size()) - 1);
    const MedusaHeads two_layer = random_heads(file, 3, 40, 2);
    const MedusaHeads shared = MedusaHeads::init_from_model(file, 3);  // all share the classifier
    for (TreeRunner* runner : {static_cast<TreeRunner*>(&gpu_runner), static_cast<TreeRunner*>(&cpu_runner)}) {
        for (const MedusaHeads* heads : {&two_layer, &shared}) {
            CAPTURE(runner->engine_name(), heads == &shared ? "init heads (shared classifier)" : "random two-layer heads");
            MedusaDrafter medusa(*runner, file, *heads, build_tree_buffers(load_tree("dense:3,3,3"), 10));
            std::vector<StepTrace> steps;
            decode(*runner, medusa, greedy_options(8), prompt, nullptr, &steps);
            REQUIRE(steps.size() >= 2);
            const StepTrace& st = steps[1];
            REQUIRE(st.nodes.size() == 40);
            for (size_t i = 1; i < st.nodes.size(); ++i) {
                const TreeNodeTrace& n = st.nodes[i];
                auto logits = heads->logits(n.depth - 1, h);
                std::vector<int> order(logits.size());
                for (size_t v = 0; v < order.size(); ++v) order[v] = int(v);
                std::partial_sort(order.begin(), order.begin() + 3, order.end(),
                                  [&](int a, int b) { return logits[a] > logits[b]; });
                double z = 0;
                const float top = logits[order[0]];
                for (float l : logits) z += std::exp(double(l) - top);
                CAPTURE(i, n.depth, n.rank);
                CHECK(n.token == order[n.rank]);
                CHECK(n.draft_prob == Approx(std::exp(double(logits[n.token]) - top) / z).margin(1e-4));
            }
        }
    }
}

TEST_CASE("a drafting stage runs only on the runner that made it, and goes with its handle", "[medusa]") {
    test::ValidationGuard guard;
    GpuTarget target("stories260K.bin");
    GpuTreeRunner other(target.model);  // a second runner over the same model
    const MedusaHeads heads = MedusaHeads::init_from_model(target.file, 2);
    const TreeBuffers tree = build_tree_buffers(load_tree("chain:2"));
    MedusaDrafter drafter(target.runner, target.file, heads, tree);
    decode(target.runner, drafter, greedy_options(3), kStoryPrompts[0]);  // the heads now have a hidden state
    const TokenBlock block = CandidateTree::root_only(1).block(0);
    TreeRunOptions o;
    o.stage = drafter.device_stage();
    REQUIRE(o.stage != nullptr);
    CHECK_THROWS_WITH(other.run(block, o), "a drafting stage of another engine");
    CHECK_THROWS_WITH(other.prepare(2, o.stage), "a drafting stage of another engine");
    // A stage whose handle is gone is unknown to its runner too.
    const uint64_t gone = [&] {
        auto stage = target.runner.medusa_stage(target.file, heads, 2, 1, std::vector<int>{0, 1, 2});
        return stage->serial();
    }();
    DraftStage stale(gone, 3, nullptr);
    CHECK_THROWS_WITH(target.runner.prepare(2, &stale), "a drafting stage of another engine");
}
