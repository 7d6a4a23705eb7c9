// The whole GPU forward pass against the CPU reference, on the real model files:
// prompts (causal blocks), single-token decoding, and tree-shaped attention masks.
#include <catch2/catch.hpp>

#include "greedy_reference.h"
#include "gpu_fixture.h"
#include "llm/cpu_reference.h"
#include "llm/gpu_model.h"
#include "model/load_model.h"
#include "scoped_env.h"
#include "test_paths.h"

using namespace medusa;
using medusa::test::gpu_context;
using medusa::test::model_path;

namespace {

float logits_diff(LanguageModel& a, LanguageModel& b, int t) {
    auto la = a.logits(t), lb = b.logits(t);
    return test::max_abs_diff(la.data(), lb.data(), la.size());
}

// A small tree over the block: token 0 is the root, 1 and 2 its children, 3 a child of 1, 4 of 3.
TokenBlock tree_block(int base, const std::vector<int>& tokens) {
    const std::vector<int> parent = {-1, 0, 0, 1, 3, 2};
    TokenBlock b;
    b.base = base;
    b.tokens = tokens;
    const int n = int(tokens.size());
    b.mask.assign(n, std::vector<uint8_t>(n, 0));
    b.positions.resize(n);
    for (int t = 0; t < n; ++t) {
        int depth = 0;
        for (int a = t; a >= 0; a = parent[a]) b.mask[t][a] = 1, depth += a != t;
        b.positions[t] = base + depth;
    }
    return b;
}

}  // namespace

TEST_CASE("GPU forward equals the CPU reference on every shipped model file", "[gpu-forward]") {
    test::ValidationGuard guard;
    // Tolerances: fp32 files agree to rounding; f16/quantized weights are dequantized identically
    // on both sides, so they too differ only by summation order.
    const char* files[] = {"stories260K.bin", "llama2xs.bin", "stories260K_q80.bin", "gguf/stories260K-f32.gguf",
                           "gguf/stories260K-f16.gguf", "gguf/llama2xs-q8_0.gguf", "gguf/llama2xs-q4_0.gguf"};
    for (const char* name : files)
    for (KernelLayouts layouts : {KernelLayouts::Gpu, KernelLayouts::Cpu})  // both, whatever the device
    for (bool texel : {false, true}) {  // both read paths, with workgroup sizes the tuner tries
        const MatmulConfig matmul{texel, texel ? 128u : 32u, texel ? 4u : 2u};
        // The block's parameters read where the host writes them, or (discrete GPUs' way) from a
        // copy in device memory made at the start of each forward.
        const HostBufferAccess access = texel ? HostBufferAccess::DeviceCopies : HostBufferAccess::Direct;
        CAPTURE(name, layouts == KernelLayouts::Cpu, matmul.name(), texel);
        ModelFile file = load_model(model_path(name));
        CpuReferenceModel cpu(file);
        GpuModel gpu(gpu_context(), file, {.layouts = layouts, .matmul = matmul, .host_buffers = access});
        const std::vector<int> prompt = {1, 403, 407, 261, 378, 3, 81, 70};
        cpu.forward(TokenBlock::causal(0, prompt));
        gpu.forward(TokenBlock::causal(0, prompt));
        for (int t = 0; t < int(prompt.size()); ++t) CHECK(logits_diff(cpu, gpu, t) < 2e-3f);
        // Single tokens after the prompt.
        int token = cpu.argmax(int(prompt.size()) - 1);
        CHECK(gpu.argmax(int(prompt.size()) - 1) == token);
        for (int i = 0; i < 6; ++i) {
            cpu.forward(TokenBlock::causal(int(prompt.size()) + i, {token}));
            gpu.forward(TokenBlock::causal(int(prompt.size()) + i, {token}));
            CHECK(logits_diff(cpu, gpu, 0) < 2e-3f);
            CHECK(gpu.argmax(0) == cpu.argmax(0));
            token = cpu.argmax(0);
        }
        // A tree block after that: each node sees the prefix and its ancestors only.
        TokenBlock tree = tree_block(int(prompt.size()) + 6, {token, 50, 60, 70, 80, 90});
        cpu.forward(tree);
        gpu.forward(tree);
        for (int t = 0; t < tree.size(); ++t) CHECK(logits_diff(cpu, gpu, t) < 2e-3f);
    }
}

TEST_CASE("a tree node's logits equal those of its path decoded as a plain sequence", "[gpu-forward]") {
    test::ValidationGuard guard;
    ModelFile file = load_model(model_path("stories260K.bin"));
    GpuModel tree_model(gpu_context(), file);
    CpuReferenceModel chain(file);
    const std::vector<int> prompt = {1, 403, 407, 261, 378};
    TokenBlock tree = tree_block(int(prompt.size()), {10, 20, 30, 40, 50, 60});
    tree_model.forward(TokenBlock::causal(0, prompt));
    tree_model.forward(tree);
    // Node 4's path is 0 -> 1 -> 3 -> 4: tokens 10, 20, 40, 50.
    std::vector<int> seq = prompt;
    seq.insert(seq.end(), {10, 20, 40, 50});
    chain.forward(TokenBlock::causal(0, seq));
    auto a = tree_model.logits(4), b = chain.logits(int(seq.size()) - 1);
    CHECK(test::max_abs_diff(a.data(), b.data(), a.size()) < 2e-3f);
    // Node 2 (token 30, child of the root) must not see node 1: compare with prompt + 10 + 30.
    std::vector<int> seq2 = prompt;
    seq2.insert(seq2.end(), {10, 30});
    chain.forward(TokenBlock::causal(0, seq2));
    auto c = tree_model.logits(2), d = chain.logits(int(seq2.size()) - 1);
    CHECK(test::max_abs_diff(c.data(), d.data(), c.size()) < 2e-3f);
}

TEST_CASE("a tree forwarded level by level through windows equals the tree in one block", "[gpu-forward]") {
    // Tree 0 -> {1, 2}, 1 -> 3, 3 -> 4, 2 -> 5: levels {0}, {1, 2}, {3, 5}, {4}, each block seeing the
    // earlier levels' slots only through its window mask (its ancestors).
    test::ValidationGuard guard;
    ModelFile file = load_model(model_path("stories260K.bin"));
    GpuModel gpu(gpu_context(), file);
    CpuReferenceModel cpu(file);
    const std::vector<int> prompt = {1, 403, 407, 261, 378};
    const std::vector<int> tokens = {10, 20, 30, 40, 50, 60};
    const int base = int(prompt.size());
    const TokenBlock whole = tree_block(base, tokens);
    std::vector<std::vector<float>> want;
    gpu.forward(TokenBlock::causal(0, prompt));
    gpu.forward(whole);
    for (int t = 0; t < whole.size(); ++t) want.emplace_back(gpu.logits(t).begin(), gpu.logits(t).end());
    // Slot of each node when levels are run in order 0 | 1 2 | 3 5 | 4.
    const std::vector<std::vector<int>> levels = {{0}, {1, 2}, {3, 5}, {4}};
    std::vector<int> slot(tokens.size());
    int next = base;
    for (const auto& level : levels)
        for (int n : level) slot[n] = next++;
    for (LanguageModel* m : {static_cast<LanguageModel*>(&gpu), static_cast<LanguageModel*>(&cpu)}) {
        CAPTURE(m->engine_name());
        m->forward(TokenBlock::causal(0, prompt));
        for (const auto& level : levels) {
            TokenBlock b;
            b.base = slot[level[0]];
            b.window = b.base - base;
            for (int n : level) {
                b.tokens.push_back(tokens[n]);
                b.positions.push_back(whole.positions[n]);
                b.mask.push_back(std::vector<uint8_t>(level.size(), 0));
                b.mask.back()[b.tokens.size() - 1] = 1;
                std::vector<uint8_t> w(b.window, 0);
                for (int a = 0; a < int(tokens.size()); ++a)
                    if (a != n && whole.sees(n, a)) w[slot[a] - base] = 1;  // an ancestor in an earlier level
                b.window_mask.push_back(w);
            }
            m->forward(b);
            for (size_t i = 0; i < level.size(); ++i)
                CHECK(test::max_abs_diff(m->logits(int(i)).data(), want[level[i]].data(), want[level[i]].size()) < 2e-3f);
        }
    }
}

TEST_CASE("greedy decoding gives the same tokens on the GPU and the CPU reference", "[gpu-forward]") {
    test::ValidationGuard guard;
    for (const char* name : {"stories260K.bin", "llama2xs.bin", "stories260K_q80.bin"}) {
        CAPTURE(name);
        ModelFile file = load_model(model_path(name));
        CpuReferenceModel cpu(file);
        GpuModel gpu(gpu_context(), file);
        const std::vector<int> prompt = {1, 403, 407, 261, 378};
        const std::vector<int> a = test::greedy_ar(cpu, prompt, 120), b = test::greedy_ar(gpu, prompt, 120);
        CHECK(a.size() == 120);
        CHECK(a == b);
    }
}

TEST_CASE("MEDUSA_HOST_BUFFERS picks direct access or device copies, and a value it cannot read is one error naming it",
          "[gpu-forward]") {
    auto& ctx = gpu_context();
    {
        test::ScopedEnv unset("MEDUSA_HOST_BUFFERS", nullptr);
        CHECK(host_buffers_from_environment() == std::nullopt);
        // A CPU driver's host memory is its device memory: no copies unless asked for.
        if (ctx.info().kind == gpu::DeviceKind::Cpu) CHECK_FALSE(uses_device_copies(ctx, HostBufferAccess::Auto));
        CHECK(uses_device_copies(ctx, HostBufferAccess::DeviceCopies));
    }
    {
        test::ScopedEnv copies("MEDUSA_HOST_BUFFERS", "copies");
        CHECK(uses_device_copies(ctx, HostBufferAccess::Auto));
        CHECK_FALSE(uses_device_copies(ctx, HostBufferAccess::Direct));  // a model's own choice wins
    }
    {
        test::ScopedEnv direct("MEDUSA_HOST_BUFFERS", "direct");
        CHECK_FALSE(uses_device_copies(ctx, HostBufferAccess::Auto));
    }
    test::ScopedEnv bad("MEDUSA_HOST_BUFFERS", "device");
    CHECK_THROWS_WITH(uses_device_copies(ctx, HostBufferAccess::Auto), Catch::Contains("MEDUSA_HOST_BUFFERS='device'"));
}
