// Medusa decoding on the GPU against plain decoding and against the model's own distribution.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>

#include "decode/autoregressive.h"
#include "decode/medusa_decoder.h"
#include "gpu_fixture.h"
#include "greedy_reference.h"
#include "llm/cpu_reference.h"
#include "test_paths.h"

using namespace medusa;
using medusa::test::gpu_context;
using medusa::test::greedy_ar;
using medusa::test::model_path;

namespace {

std::vector<int> run_medusa(GpuModel& gpu, const ModelFile& file, const MedusaHeads& heads, const TreeBuffers& tree,
                            MedusaOptions o, const std::vector<int>& prompt, GenerationStats* stats = nullptr) {
    MedusaDecoder d(gpu, file, heads, tree, o);
    std::vector<int> out;
    auto s = d.generate(prompt, [&](const StepTrace& st) {
        out.insert(out.end(), st.emitted.begin(), st.emitted.end());
        return true;
    });
    if (stats) *stats = s;
    return out;
}

// Heads that guess badly: random residual blocks and projections.
MedusaHeads random_heads(const ModelFile& file, int k, uint32_t seed) {
    MedusaHeads h = MedusaHeads::init_from_model(file, k);
    for (auto& head : h.heads) {
        head.w1[0] = test::random_floats(head.w1[0].size(), seed++, 0.2f);
        head.b1[0] = test::random_floats(head.b1[0].size(), seed++, 0.2f);
        head.w2 = test::random_floats(head.w2.size(), seed++, 0.2f);
    }
    return h;
}

const std::vector<std::vector<int>> kPrompts = {{1, 403, 407, 261, 378}, {1, 70, 81}, {1, 339, 16, 269, 290, 3}};

}  // namespace

TEST_CASE("greedy Medusa reproduces greedy autoregressive decoding token for token", "[medusa]") {
    test::ValidationGuard guard;
    for (const char* name : {"stories260K.bin", "llama2xs.bin"}) {
        ModelFile file = load_model(model_path(name));
        CpuReferenceModel cpu(file);
        GpuModel gpu(gpu_context(), file);
        const MedusaHeads init = MedusaHeads::init_from_model(file, 4);
        const MedusaHeads noise = random_heads(file, 4, 17);
        for (const char* spec : {"1", "chain:4", "dense:2,3,2", "mc_sim_7b_63"}) {
            TreeBuffers tree = build_tree_buffers(load_tree(spec), 10);
            for (const MedusaHeads* heads : {&init, &noise}) {
                for (const auto& prompt : kPrompts) {
                    CAPTURE(name, spec, heads == &init ? "init heads" : "random heads", prompt);
                    const int n = 100;
                    MedusaOptions o;
                    o.max_new_tokens = n;
                    GenerationStats stats;
                    auto got = run_medusa(gpu, file, *heads, tree, o, prompt, &stats);
                    CHECK(got == greedy_ar(cpu, prompt, n));
                    if (tree.num_nodes == 1) CHECK(stats.forward_passes == n - 1);
                }
            }
        }
    }
}

TEST_CASE("the compacted cache continues exactly like a sequence recomputed from scratch", "[medusa]") {
    test::ValidationGuard guard;
    ModelFile file = load_model(model_path("stories260K.bin"));
    GpuModel gpu(gpu_context(), file);
    CpuReferenceModel cpu(file);
    const MedusaHeads heads = MedusaHeads::init_from_model(file, 4);
    TreeBuffers tree = build_tree_buffers(load_tree("mc_sim_7b_63"), 10);
    for (int n : {2, 9, 30}) {
        CAPTURE(n);
        std::vector<int> seq = kPrompts[0];
        MedusaOptions o;
        o.max_new_tokens = n;
        auto out = run_medusa(gpu, file, heads, tree, o, seq);
        seq.insert(seq.end(), out.begin(), out.end());
        // The last emitted token is not in the cache yet: decode it plainly from the compacted cache.
        gpu.forward(TokenBlock::causal(int(seq.size()) - 1, {seq.back()}));
        cpu.forward(TokenBlock::causal(0, seq));
        auto a = gpu.logits(0), b = cpu.logits(int(seq.size()) - 1);
        CHECK(test::max_abs_diff(a.data(), b.data(), a.size()) < 2e-3f);
    }
}

TEST_CASE("typical acceptance at temperature near 0 behaves as greedy", "[medusa]") {
    test::ValidationGuard guard;
    ModelFile file = load_model(model_path("stories260K.bin"));
    GpuModel gpu(gpu_context(), file);
    CpuReferenceModel cpu(file);
    const MedusaHeads heads = MedusaHeads::init_from_model(file, 4);
    TreeBuffers tree = build_tree_buffers(load_tree("mc_sim_7b_63"), 10);
    MedusaOptions o;
    o.rule = AcceptRule::Typical;
    o.temperature = 1e-4f;
    o.max_new_tokens = 80;
    CHECK(run_medusa(gpu, file, heads, tree, o, kPrompts[0]) == greedy_ar(cpu, kPrompts[0], 80));
}

TEST_CASE("every tree node carries its own head's candidate of its rank", "[medusa]") {
    test::ValidationGuard guard;
    ModelFile file = load_model(model_path("stories260K.bin"));
    GpuModel gpu(gpu_context(), file);
    // Init heads all repeat the model's classifier on the same hidden state, so head k's rank-r
    // guess is the same token for every k: along a chain every node must hold the rank-0 token,
    // and a dense tree's nodes of one rank must agree across depths.
    const MedusaHeads heads = MedusaHeads::init_from_model(file, 4);
    CpuReferenceModel cpu(file);
    for (const char* spec : {"chain:4", "dense:2,2,2", "mc_sim_7b_63"}) {
        CAPTURE(spec);
        TreeBuffers tree = build_tree_buffers(load_tree(spec), 10);
        MedusaDecoder d(gpu, file, heads, tree, MedusaOptions{.max_new_tokens = 12});
        int steps = 0;
        d.generate(kPrompts[0], [&](const StepTrace& st) {
            if (st.nodes.empty()) return true;
            ++steps;
            std::map<int, int> token_of_rank;
            for (size_t i = 1; i < st.nodes.size(); ++i) {
                auto [it, fresh] = token_of_rank.emplace(st.nodes[i].rank, st.nodes[i].token);
                CHECK(it->second == st.nodes[i].token);
            }
            return true;
        });
        CHECK(steps > 0);
    }
}

TEST_CASE("the first step's candidates are the CPU reference heads' top-k, also for two-layer heads", "[medusa]") {
    // Step 1's heads read the prompt's last hidden state, which the CPU reference also has, so
    // every node at depth d and rank r must hold head d-1's rank-r token with its probability.
    test::ValidationGuard guard;
    ModelFile file = load_model(model_path("stories260K.bin"));
    GpuModel gpu(gpu_context(), file);
    CpuReferenceModel cpu(file);
    const std::vector<int>& prompt = kPrompts[0];
    cpu.forward(TokenBlock::causal(0, prompt));
    const auto h = cpu.hidden(int(prompt.size()) - 1);
    MedusaHeads two_layer = MedusaHeads::init_from_model(file, 3, 2);
    uint32_t seed = 40;
    for (auto& head : two_layer.heads) {
        for (int l = 0; l < 2; ++l) {
            head.w1[l] = test::random_floats(head.w1[l].size(), seed++, 0.3f);
            head.b1[l] = test::random_floats(head.b1[l].size(), seed++, 0.3f);
        }
        head.w2 = test::random_floats(head.w2.size(), seed++, 0.5f);
    }
    const MedusaHeads shared = MedusaHeads::init_from_model(file, 3);  // all share the classifier
    for (const MedusaHeads* heads : {static_cast<const MedusaHeads*>(&two_layer), &shared}) {
        CAPTURE(heads == &shared ? "init heads (shared classifier)" : "random two-layer heads");
        TreeBuffers tree = build_tree_buffers(load_tree("dense:3,3,3"), 10);
        MedusaDecoder d(gpu, file, *heads, tree, MedusaOptions{.max_new_tokens = 8});
        int checked = 0;
        d.generate(prompt, [&](const StepTrace& st) {
            if (st.step != 1) return true;
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
                CHECK(n.head_prob == Approx(std::exp(double(logits[n.token]) - top) / z).margin(1e-4));
                ++checked;
            }
            return false;
        });
        CHECK(checked == 39);
    }
}
