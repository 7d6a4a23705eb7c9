// EAGLE-2's dynamic tree at every top-k and depth its flags take: the run giving level d's tokens
// sees the d - 2 levels run before it, top-k tokens each, through its block's window of at most
// 128 slots, so the tree stops at eagle_deepest_level(top-k) instead of asking for a larger window
// (which stopped the run at its first step). Greedy decoding with the cut tree gives plain greedy
// text, and the command line says in one line that it cut the depth.
#include <catch2/catch.hpp>

#include <filesystem>

#include "cli_runner.h"
#include "decode/eagle_drafter.h"
#include "decode_support.h"
#include "greedy_reference.h"
#include "llm/cpu_reference.h"
#include "llm/cpu_tree_runner.h"
#include "llm/eagle_layer_io.h"
#include "model/load_model.h"
#include "test_paths.h"

using namespace medusa;
using namespace medusa::test;
namespace fs = std::filesystem;

TEST_CASE("the deepest EAGLE-2 level is the last whose run fits a block's window", "[eagle]") {
    // Level d's run sees (d - 2) * top_k earlier slots: 14 levels of 10 (12 * 10 = 120 slots), not 15 (130).
    CHECK(eagle_deepest_level(10) == 14);
    CHECK(eagle_deepest_level(9) == 16);   // 14 * 9 = 126
    CHECK(eagle_deepest_level(32) == 6);   // 4 * 32 = 128, all of the window
    CHECK(eagle_deepest_level(1) == 130);  // never the limit: depth stops at 16
    for (int k = 1; k <= 32; ++k) {
        CAPTURE(k);
        const int d = eagle_deepest_level(k);
        CHECK((d - 2) * k <= TokenBlock::kMaxTokens);
        CHECK((d - 1) * k > TokenBlock::kMaxTokens);
    }
}

TEST_CASE("every EAGLE-2 top-k and depth in range drafts and gives plain greedy text", "[eagle]") {
    const ModelFile file = load_model(model_path("stories260K.bin"));
    CpuReferenceModel model(file);
    CpuTreeRunner runner(model);
    const std::vector<int>& prompt = kStoryPrompts[0];
    const int n = 17;  // a step drafts no deeper than the tokens still wanted: the first may draft 16 levels
    const std::vector<int> expected = greedy_ar(model, prompt, n);
    auto eagle_runner = runner.eagle_runner(file, EagleLayer::init(file.config, 3));
    int cut = 0;
    for (int top_k = 1; top_k <= 32; ++top_k)
        for (int depth = 1; depth <= 16; ++depth) {
            CAPTURE(top_k, depth);
            EagleDrafter eagle(*eagle_runner, {.top_k = top_k, .depth = depth, .nodes = TokenBlock::kMaxTokens - 1});
            const int levels = std::min(depth, eagle_deepest_level(top_k));
            CHECK(eagle.depth_limit() == levels);
            cut += levels < depth;
            // The prompt's step, then two drafted ones: the deepest tree, and one after the layer caught up.
            SpeculativeDecoder decoder(runner, eagle, greedy_options(n));
            std::vector<int> out;
            int steps = 0, deepest = 0;
            REQUIRE_NOTHROW(decoder.generate(prompt, [&](const StepTrace& s) {
                out.insert(out.end(), s.emitted.begin(), s.emitted.end());
                for (const auto& node : s.nodes) deepest = std::max(deepest, node.depth);
                return ++steps < 3;
            }));
            REQUIRE(out.size() <= expected.size());
            CHECK(std::equal(out.begin(), out.end(), expected.begin()));
            CHECK(deepest <= levels);
        }
    CHECK(cut == 175);  // the pairs with (depth - 2) * top_k > 128, every one of which stopped the run
}

TEST_CASE("the command line cuts EAGLE's depth to the window with one line, and decodes on", "[eagle]") {
    const fs::path dir = fs::temp_directory_path() / ("medusa_eagle_window_" + std::to_string(getpid()));
    fs::remove_all(dir);
    const ModelFile file = load_model(model_path("stories260K.bin"));
    save_eagle_layer(EagleLayer::init(file.config, 5), (dir / "eagle2").string(), file.path);
    const std::string common = "generate -m " + model_path("stories260K.bin") + " --tokenizer " +
                               model_path("tok512.model") + " -p 'Once upon a time' -n 24 --temp 0 ";
    for (const std::string engine : {"", "--cpu "}) {
        const auto plain = run_medusa(common + engine);
        REQUIRE(plain.exit_code == 0);
        for (const std::string& layer : {(dir / "eagle2").string(), std::string(MEDUSA_SOURCE_DIR) + "/tests/data/eagle3/layers-0-2-4"}) {
            CAPTURE(engine, layer);
            const auto r = run_medusa(common + engine + "--eagle " + layer +
                                      " --eagle-depth 16 --eagle-topk 10 --eagle-nodes 127 --fixed-shape");
            INFO(r.err);
            CHECK(r.exit_code == 0);
            CHECK(r.out == plain.out);
            CHECK_THAT(r.err, Catch::Contains("warning: EAGLE drafts 14 levels, not 16: with top-k 10, a deeper level "
                                              "would look back on more than 128 drafted tokens\n"));
            CHECK(r.err.find("out of range") == std::string::npos);
            CHECK(r.err.find("[vulkan validation]") == std::string::npos);
        }
    }
    fs::remove_all(dir);
}
