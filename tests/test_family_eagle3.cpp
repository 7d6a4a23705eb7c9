// EAGLE-3 drafters of Qwen3 targets (SpecForge's and AngelSlim's): their decoder layer keeps the
// target's head_dim, which is not hidden_size / heads (Qwen3-4B: 2560 over 32 heads of 128). Such a
// drafter for the Qwen3 fixture (hidden 64, 4 heads of 32: q is 128 wide) is written in SafeAILab's
// folder layout (config.json's head_dim) and as llama.cpp's eagle3 GGUF (attention.key_length),
// loaded back from both, run on the GPU against the CPU layer, and drafts plain greedy text.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>

#include "decode/eagle_drafter.h"
#include "decode_support.h"
#include "gpu_fixture.h"
#include "greedy_reference.h"
#include "llm/cpu_reference.h"
#include "llm/cpu_tree_runner.h"
#include "llm/eagle_layer_io.h"
#include "model/dequantize.h"
#include "model/load_model.h"

using namespace medusa;
namespace fs = std::filesystem;

namespace {

std::string arch_path(const std::string& name) { return std::string(MEDUSA_SOURCE_DIR) + "/tests/data/arch/" + name; }

// A fresh EAGLE-3 layer over the target's layers 0, 1, 2 whose heads are `head` wide, with random
// attention weights of that shape.
EagleLayer eagle3_with_head_size(const ModelFile& target, int head, uint32_t seed) {
    const LlamaConfig& c = target.config;
    std::vector<int> vocab;
    for (int t = 0; t < c.vocab_size; t += 2) vocab.push_back(t);
    EagleLayer e = EagleLayer::init_eagle3(c, {0, 1, 2}, vocab, dequantize(target.get("norm")),
                                           dequantize(target.classifier()), seed);
    e.head_size = head;
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 0.05f);
    auto random = [&](size_t n) {
        std::vector<float> v(n);
        for (float& x : v) x = normal(rng);
        return v;
    };
    const size_t in = size_t(e.attention_input());
    e.wq = random(size_t(e.q_dim()) * in);
    e.wk = random(size_t(e.kv_dim()) * in);
    e.wv = random(size_t(e.kv_dim()) * in);
    e.wo = random(size_t(e.dim) * e.q_dim());
    e.check_fits(c);
    return e;
}

// llama.cpp's eagle3 GGUF of `e` (as its converter writes a SpecForge checkpoint of a Qwen3
// target: attention.key_length, q/k rows in adjacent-pair order, d2t as target ids).
void write_eagle3_gguf(const EagleLayer& e, const std::string& path) {
    std::string b;
    auto raw = [&](const void* p, size_t n) { b.append(static_cast<const char*>(p), n); };
    auto u32 = [&](uint32_t v) { raw(&v, 4); };
    auto u64 = [&](uint64_t v) { raw(&v, 8); };
    auto str = [&](const std::string& s) { u64(s.size()), raw(s.data(), s.size()); };
    struct T {
        std::string name;
        std::vector<uint64_t> ne;  // innermost first
        std::string bytes;
        uint32_t type;             // 0 F32, 27 I64
    };
    auto f32 = [](const std::vector<float>& v) { return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4); };
    const uint64_t d = e.dim, q = e.q_dim(), kv = e.kv_dim(), h = e.hidden_dim, in = 2 * d;
    std::vector<float> fc(size_t(d) * 3 * d, 0.0f);  // the three listed layers are the layer's three
    for (size_t r = 0; r < d; ++r)
        for (size_t c = 0; c < 3 * d; ++c) fc[r * 3 * d + c] = e.fc_w[r * 3 * d + c];
    std::vector<int64_t> d2t(e.draft_to_target.begin(), e.draft_to_target.end());
    const std::vector<T> tensors = {
        {"fc.weight", {3 * d, d}, f32(fc), 0},
        {"blk.0.attn_norm.weight", {d}, f32(e.input_norm), 0},
        {"blk.0.attn_norm_2.weight", {d}, f32(e.hidden_norm), 0},
        {"blk.0.attn_q.weight", {in, q}, f32(e.wq), 0},
        {"blk.0.attn_k.weight", {in, kv}, f32(e.wk), 0},
        {"blk.0.attn_v.weight", {in, kv}, f32(e.wv), 0},
        {"blk.0.attn_output.weight", {q, d}, f32(e.wo), 0},
        {"blk.0.ffn_norm.weight", {d}, f32(e.post_norm), 0},
        {"blk.0.ffn_gate.weight", {d, h}, f32(e.w_gate), 0},
        {"blk.0.ffn_up.weight", {d, h}, f32(e.w_up), 0},
        {"blk.0.ffn_down.weight", {h, d}, f32(e.w_down), 0},
        {"output_norm.weight", {d}, f32(e.final_norm), 0},
        {"output.weight", {d, uint64_t(e.draft_vocab())}, f32(e.draft_head), 0},
        {"d2t", {d2t.size()}, std::string(reinterpret_cast<const char*>(d2t.data()), d2t.size() * 8), 27},
    };
    u32(0x46554747), u32(3), u64(tensors.size()), u64(12);
    str("general.architecture"), u32(8), str("eagle3");
    auto count = [&](const std::string& k, uint32_t v) { str("eagle3." + k), u32(4), u32(v); };
    count("embedding_length", uint32_t(d));
    count("feed_forward_length", uint32_t(h));
    count("block_count", 1);
    count("attention.head_count", uint32_t(e.n_heads));
    count("attention.head_count_kv", uint32_t(e.n_kv_heads));
    count("attention.key_length", uint32_t(e.head_dim()));
    count("attention.value_length", uint32_t(e.head_dim()));
    count("rope.dimension_count", uint32_t(e.head_dim()));
    str("eagle3.rope.freq_base"), u32(6), raw(&e.rope_theta, 4);
    str("eagle3.attention.layer_norm_rms_epsilon"), u32(6), raw(&e.rms_eps, 4);
    str("eagle3.target_layers"), u32(9), u32(5), u64(3);
    for (int l : e.target_layers) u32(uint32_t(l));
    uint64_t offset = 0;
    for (const T& t : tensors) {
        str(t.name), u32(uint32_t(t.ne.size()));
        for (uint64_t n : t.ne) u64(n);
        u32(t.type), u64(offset);
        offset += (t.bytes.size() + 31) / 32 * 32;
    }
    b.resize((b.size() + 31) / 32 * 32, '\0');
    for (const T& t : tensors) b += t.bytes, b.resize((b.size() + 31) / 32 * 32, '\0');
    std::ofstream(path, std::ios::binary) << b;
}

}  // namespace

TEST_CASE("EAGLE-3 drafters of Qwen3 targets, with heads not hidden/heads wide, load from both layouts and draft",
          "[families][eagle3]") {
    test::ValidationGuard guard;
    test::GpuTarget target(ModelFile(load_model(arch_path("qwen3-f32.gguf"))));
    const ModelFile& file = target.file;
    const EagleLayer layer = eagle3_with_head_size(file, 32, 7);  // 4 heads of 32 over a hidden size of 64
    REQUIRE(layer.q_dim() == 128);
    const fs::path dir = fs::temp_directory_path() / ("medusa_eagle3_heads_" + std::to_string(getpid()));
    fs::remove_all(dir);
    save_eagle_layer(layer, (dir / "folder").string(), "qwen3-f32");
    write_eagle3_gguf(layer, (dir / "draft.gguf").string());
    const EagleLayer from_folder = load_eagle_layer((dir / "folder").string(), file.config);
    const EagleLayer from_gguf = load_eagle_layer((dir / "draft.gguf").string(), file.config);
    for (const EagleLayer* loaded : {&from_folder, &from_gguf}) {
        CHECK(loaded->head_dim() == 32);
        CHECK(loaded->wq == layer.wq);  // q rows back in adjacent-pair order from rotate_half
        CHECK(loaded->wk == layer.wk);
        CHECK(loaded->wo == layer.wo);
    }
    // The GPU layer against the CPU one, drafting a chain from the target's features.
    CpuReferenceModel cpu_model(file);
    CpuTreeRunner cpu(cpu_model);
    auto g = target.runner.eagle_runner(file, from_gguf), c = cpu.eagle_runner(file, from_gguf);
    const std::vector<int> prompt = {1, 400, 200, 300, 17, 99, 23};
    target.runner.prefill(0, prompt);
    cpu.prefill(0, prompt);
    std::vector<int> source;
    for (int i = 0; i + 1 < int(prompt.size()); ++i) source.push_back(EagleRunner::target_slot(i));
    const TokenBlock sync = TokenBlock::causal(0, {prompt.begin() + 1, prompt.end()});
    for (EagleRunner* r : {g.get(), c.get()}) r->run(sync, source);
    for (int t = 0; t < sync.size(); ++t)
        CHECK(test::max_abs_diff(g->logits(t).data(), c->logits(t).data(), size_t(file.config.vocab_size)) < 2e-3f);
    // Drafting with it gives plain greedy text to the end of the context.
    const auto expected = test::greedy_ar(target.model, prompt, 100000);
    EagleOptions o;
    o.top_k = 4, o.depth = 4, o.nodes = 16;
    auto runner = target.runner.eagle_runner(file, from_folder);
    EagleDrafter eagle(*runner, o);
    GenerationStats stats;
    CHECK(test::decode(target.runner, eagle, test::greedy_options(100000), prompt, &stats) == expected);
    CHECK(stats.stop_reason == StopReason::Context);
    fs::remove_all(dir);
}
