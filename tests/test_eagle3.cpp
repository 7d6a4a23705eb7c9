// EAGLE-3 checkpoints in the published layout (tests/data/eagle3, written by
// scripts/make_eagle3_fixture.py with SafeAILab's own cnets.py as the reference): the first draft
// chain equals the reference's on the GPU and on the C++ reference, with SafeAILab's layer rule
// (one layer, fc skipped) and with eagle_aux_hidden_state_layer_ids (three layers through fc), in
// llama.cpp's GGUF files too (one written by its own converter);
// the GPU layer predicts what the CPU layer does; greedy EAGLE-3 gives plain greedy text to the
// end of the context; and broken files are refused with one line naming the file.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_runner.h"
#include "decode/eagle_drafter.h"
#include "decode_support.h"
#include "eagle_load_error.h"
#include "file_text.h"
#include "greedy_reference.h"
#include "llm/cpu_reference.h"
#include "llm/cpu_tree_runner.h"
#include "llm/eagle_layer_io.h"
#include "model/load_model.h"
#include "test_paths.h"

using namespace medusa;
using namespace medusa::test;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kFixtures = std::string(MEDUSA_SOURCE_DIR) + "/tests/data/eagle3/";
// Written by llama.cpp's own converter (shared/testdata/eagle3/README.md); its expected chain is
// scripts/make_eagle3_gguf_fixture.py --llamacpp's.
const std::string kConverted = testdata_path("eagle3/stories260K-eagle3-llamacpp-f16.gguf");

json read_json_file(const std::string& path) {
    std::ifstream f(path);
    REQUIRE(f);
    return json::parse(f);
}

// A copy of a fixture folder to break.
fs::path copy_fixture(const std::string& name, const std::string& as) {
    const fs::path dir = fs::temp_directory_path() / ("medusa_eagle3_" + as + "_" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    for (const char* f : {"config.json", "model.safetensors", "pytorch_model.bin"})
        if (fs::exists(kFixtures + name + "/" + f)) fs::copy_file(kFixtures + name + "/" + f, dir / f);
    return dir;
}

// Sets the int64 d2t offset of draft token `i` in a copied model.safetensors.
void set_d2t(const fs::path& dir, size_t i, int64_t value) {
    std::string bytes = read_text(dir / "model.safetensors");
    uint64_t header_len;
    std::memcpy(&header_len, bytes.data(), 8);
    const json header = json::parse(bytes.substr(8, header_len));
    const uint64_t begin = header["d2t"]["data_offsets"][0].get<uint64_t>();
    std::memcpy(&bytes[8 + header_len + begin + 8 * i], &value, 8);
    write_text(dir / "model.safetensors", bytes);
}

}  // namespace

TEST_CASE("an EAGLE-3 checkpoint drafts SafeAILab's first chain, on the GPU and the C++ reference", "[eagle3]") {
    const ModelFile target = load_model(model_path("stories260K.bin"));
    // layers-0-2-4-torch: the same checkpoint as pytorch_model.bin, read by the restricted unpickler.
    // gguf/: llama.cpp's EAGLE-3 files (scripts/make_eagle3_gguf_fixture.py): layers-0-2-4 converted
    // (F32, and F16 matrices), and the default checkpoint as llama.cpp's converter writes it (layer 2
    // three times through fc). llama3-rope: Llama 3's RoPE scaling (scripts/make_eagle3_rope_fixture.py),
    // as config.json's rope_scaling and as the GGUF's rope_freqs. norm-before-fc: llama.cpp's RMSNorm
    // over the three inputs before fc. And the file llama.cpp's converter wrote (layer 2 three times,
    // F16, a draft vocabulary of 200).
    for (const auto& [name, expected_file] : std::vector<std::pair<std::string, std::string>>{
             {kFixtures + "default", "default/expected.json"},
             {kFixtures + "layers-0-2-4", "layers-0-2-4/expected.json"},
             {kFixtures + "layers-0-2-4-torch", "layers-0-2-4-torch/expected.json"},
             {kFixtures + "gguf/layers-0-2-4.gguf", "gguf/layers-0-2-4.expected.json"},
             {kFixtures + "gguf/layers-0-2-4-f16.gguf", "gguf/layers-0-2-4-f16.expected.json"},
             {kFixtures + "gguf/llama-cpp-rule.gguf", "gguf/llama-cpp-rule.expected.json"},
             {kFixtures + "layers-0-2-4-llama3-rope", "layers-0-2-4-llama3-rope/expected.json"},
             {kFixtures + "gguf/layers-0-2-4-llama3-rope.gguf", "gguf/layers-0-2-4-llama3-rope.expected.json"},
             {kFixtures + "gguf/norm-before-fc.gguf", "gguf/norm-before-fc.expected.json"},
             {kConverted, "gguf/stories260K-eagle3-llamacpp-f16.expected.json"}}) {
        CAPTURE(name);
        const json want = read_json_file(kFixtures + expected_file);
        const EagleLayer layer = load_eagle_layer(name, target.config);
        CHECK(layer.eagle3());
        CHECK(layer.target_layers == want["layers"].get<std::vector<int>>());
        CHECK(layer.fuses() == want["fc_applied"].get<bool>());
        for (const std::string engine : {"", "--cpu "}) {
            CAPTURE(engine);
            const std::string trace = (fs::temp_directory_path() / ("medusa_eagle3_trace_" + std::to_string(getpid()))).string();
            const auto r = run_medusa("generate " + engine + "-m " + model_path("stories260K.bin") + " --tokenizer " +
                                      model_path("tok512.model") + " --eagle " + name +
                                      " --eagle-topk 1 --eagle-depth 6 --temp 0 -n 16 --fixed-shape -p '" +
                                      want["prompt"].get<std::string>() + "' --trace " + trace);
            INFO(r.err);
            REQUIRE(r.exit_code == 0);
            CHECK(r.err.find("[vulkan validation]") == std::string::npos);
            std::ifstream lines(trace);
            std::string first, second;
            std::getline(lines, first);
            std::getline(lines, second);
            const json step = json::parse(second);  // step 1 is the prompt's forward
            const json& nodes = step["nodes"];
            REQUIRE(nodes.size() == want["chain"].size() + 1);
            CHECK(nodes[0]["token"] == want["first_token"]);
            for (size_t i = 0; i < want["chain"].size(); ++i) {
                CAPTURE(i);
                CHECK(nodes[i + 1]["token"] == want["chain"][i]["token"]);
                CHECK(nodes[i + 1]["depth"] == int(i) + 1);
                CHECK(nodes[i + 1]["draft_prob"].get<double>() ==
                      Approx(want["chain"][i]["prob"].get<double>()).margin(2e-5));
            }
            fs::remove(trace);
        }
    }
}

TEST_CASE("the GPU EAGLE-3 layer predicts what the CPU layer predicts, from fused features and its own", "[eagle3]") {
    ValidationGuard guard;
    GpuTarget gpu("stories260K.bin");
    CpuReferenceModel cpu_model(gpu.file);
    CpuTreeRunner cpu(cpu_model);
    for (const std::string& name : {kFixtures + "default", kFixtures + "layers-0-2-4", kFixtures + "gguf/norm-before-fc.gguf",
                                    kConverted}) {
        CAPTURE(name);
        const EagleLayer layer = load_eagle_layer(name, gpu.file.config);
        auto g = gpu.runner.eagle_runner(gpu.file, layer), c = cpu.eagle_runner(gpu.file, layer);
        const std::vector<int> prompt = {1, 403, 407, 261, 378, 30, 99};
        gpu.runner.prefill(0, prompt);  // after the runners: their target layers' inputs are kept
        cpu.prefill(0, prompt);
        std::vector<int> source;
        for (int i = 0; i + 1 < int(prompt.size()); ++i) source.push_back(EagleRunner::target_slot(i));
        const TokenBlock sync = TokenBlock::causal(0, {prompt.begin() + 1, prompt.end()});
        for (EagleRunner* r : {g.get(), c.get()}) r->restart(), r->run(sync, source);
        auto same = [&](int t) {
            const auto a = g->logits(t), b = c->logits(t);
            float worst = 0;
            for (size_t i = 0; i < a.size(); ++i) {
                if (std::isinf(b[i])) worst = std::max(worst, a[i] == b[i] ? 0.0f : 1e9f);  // outside the draft vocabulary
                else worst = std::max(worst, std::fabs(a[i] - b[i]));
            }
            return worst;
        };
        for (int t = 0; t < sync.size(); ++t) CHECK(same(t) < 2e-3f);
        TokenBlock level = TokenBlock::causal(6, {50, 60});
        level.positions = {6, 6};
        level.mask = {{1, 0}, {0, 1}};
        const int last = sync.size() - 1;
        for (EagleRunner* r : {g.get(), c.get()}) r->run(level, std::vector<int>{last, last});
        for (int t = 0; t < 2; ++t) CHECK(same(t) < 2e-3f);
    }
}

TEST_CASE("greedy EAGLE-3 gives plain greedy text to the end of the context, on the GPU and the C++ reference",
          "[eagle3]") {
    ValidationGuard guard;
    GpuTarget gpu("stories260K.bin");
    CpuReferenceModel cpu_model(gpu.file);
    CpuTreeRunner cpu(cpu_model);
    const auto& prompt = kStoryPrompts[0];
    const auto expected = greedy_ar(gpu.model, prompt, 100000);
    REQUIRE(int(expected.size()) == gpu.file.config.seq_len - int(prompt.size()) + 1);
    for (const std::string& name : {kFixtures + "default", kFixtures + "layers-0-2-4", kFixtures + "gguf/llama-cpp-rule.gguf",
                                    kFixtures + "gguf/norm-before-fc.gguf", kConverted}) {
        const EagleLayer layer = load_eagle_layer(name, gpu.file.config);
        for (TreeRunner* runner : std::initializer_list<TreeRunner*>{&gpu.runner, &cpu}) {
            CAPTURE(name, runner == &cpu);
            auto eagle_runner = runner->eagle_runner(gpu.file, layer);
            EagleDrafter eagle(*eagle_runner, {.top_k = 4, .depth = 4, .nodes = 20});
            GenerationStats stats;
            CHECK(decode(*runner, eagle, greedy_options(100000), prompt, &stats) == expected);
            CHECK(stats.stop_reason == StopReason::Context);
            CHECK(stats.drafted > 0);
        }
    }
    // Back to EAGLE-2 on the same engine: the target's feature is its final-norm hidden state again.
    auto runner = gpu.runner.eagle_runner(gpu.file, EagleLayer::init(gpu.file.config, 1));
    EagleDrafter eagle(*runner, {.top_k = 4, .depth = 4, .nodes = 20});
    CHECK(decode(gpu.runner, eagle, greedy_options(100000), prompt) == expected);
}

TEST_CASE("broken EAGLE-3 files are refused with one line naming the file and the problem", "[eagle3]") {
    auto config_edit = [](const fs::path& dir, const std::function<void(json&)>& edit) {
        json c = read_json_file((dir / "config.json").string());
        edit(c);
        write_text(dir / "config.json", c.dump());
    };
    {
        const fs::path dir = copy_fixture("default", "hidden");
        config_edit(dir, [](json& c) { c["hidden_size"] = 128; });
        CHECK_THAT(eagle_load_error(dir), Catch::Contains((dir / "config.json").string()) &&
                                        Catch::Contains("hidden size 128 but the target model has 64"));
    }
    {
        const fs::path dir = copy_fixture("default", "layers");
        config_edit(dir, [](json& c) { c["eagle_config"] = {{"eagle_aux_hidden_state_layer_ids", {0, 2, 9}}}; });
        CHECK_THAT(eagle_load_error(dir), Catch::Contains("names layer 9, but the target model has layers 0 to 4"));
    }
    {
        const fs::path dir = copy_fixture("default", "vocab");
        config_edit(dir, [](json& c) { c["draft_vocab_size"] = 1000; });
        CHECK_THAT(eagle_load_error(dir), Catch::Contains("draft_vocab_size 1000 is larger than the target model's vocabulary of 512"));
    }
    {
        const fs::path dir = copy_fixture("default", "rope");
        config_edit(dir, [](json& c) { c["rope_scaling"] = {{"type", "dynamic"}, {"factor", 2.0}}; });
        CHECK_THAT(eagle_load_error(dir), Catch::Contains((dir / "config.json").string() + ": rope_scaling type 'dynamic' is not supported"));
    }
    {
        const fs::path dir = copy_fixture("default", "target-vocab");
        config_edit(dir, [](json& c) { c["vocab_size"] = 32000; });
        CHECK_THAT(eagle_load_error(dir), Catch::Contains("vocab_size 32000 is not the target model's vocabulary of 512"));
    }
    {
        const fs::path dir = copy_fixture("layers-0-2-4", "two-layers");
        config_edit(dir, [](json& c) { c["eagle_config"] = {{"eagle_aux_hidden_state_layer_ids", {0, 2}}}; });
        CHECK_THAT(eagle_load_error(dir), Catch::Contains("fc.weight reads 192 columns, but 2 target layers"));
    }
    {
        const fs::path dir = copy_fixture("default", "d2t");
        set_d2t(dir, 3, 100000);
        CHECK_THAT(eagle_load_error(dir), Catch::Contains((dir / "model.safetensors").string()) &&
                                        Catch::Contains("d2t maps draft token 3 to 100003, outside the target vocabulary"));
    }
    {
        const fs::path dir = copy_fixture("default", "d2t-twice");
        // Draft token 1 onto draft token 0's target id.
        const EagleLayer good = load_eagle_layer(kFixtures + "default", load_model(model_path("stories260K.bin")).config);
        set_d2t(dir, 1, int64_t(good.draft_to_target[0]) - 1);
        CHECK_THAT(eagle_load_error(dir), Catch::Contains("d2t maps draft tokens 0 and 1 both to target token " +
                                                    std::to_string(good.draft_to_target[0])));
    }
    {
        const fs::path dir = copy_fixture("default", "missing");
        std::string bytes = read_text(dir / "model.safetensors");
        const size_t at = bytes.find("midlayer.hidden_norm.weight");
        REQUIRE(at != std::string::npos);
        bytes.replace(at, 27, "midlayer.hidden_nor_.weight");
        write_text(dir / "model.safetensors", bytes);
        CHECK_THAT(eagle_load_error(dir), Catch::Contains("tensor 'midlayer.hidden_norm.weight' is missing"));
    }
    {
        const fs::path dir = copy_fixture("layers-0-2-4-torch", "torch-cut");
        const std::string bytes = read_text(dir / "pytorch_model.bin");
        write_text(dir / "pytorch_model.bin", bytes.substr(0, bytes.size() / 2));
        CHECK_THAT(eagle_load_error(dir), Catch::Contains((dir / "pytorch_model.bin").string()));
    }
    for (const char* tag : {"hidden", "layers", "vocab", "rope", "target-vocab", "two-layers", "d2t", "d2t-twice", "missing",
                            "torch-cut"})
        fs::remove_all(fs::temp_directory_path() / (std::string("medusa_eagle3_") + tag + "_" + std::to_string(getpid())));
}

TEST_CASE("EAGLE-2 and EAGLE-3 layers on one target take turns, each drafting from its own features", "[eagle3]") {
    // bench --compare eagle with both folders: built once, run alternately. Each asks before its
    // prompt for the features it reads; a layer's recorded runs bound to a replaced feature
    // cache are recorded again. Greedy output is plain greedy output every time, and a trained
    // EAGLE-2 layer's acceptance does not drop after EAGLE-3 ran (its features are its own).
    ValidationGuard guard;
    GpuTarget gpu("stories260K.bin");
    const auto& prompt = kStoryPrompts[1];
    const auto expected = greedy_ar(gpu.model, prompt, 48);
    auto e2_runner = gpu.runner.eagle_runner(gpu.file, EagleLayer::init(gpu.file.config, 1));
    auto e3_runner = gpu.runner.eagle_runner(gpu.file, load_eagle_layer(kFixtures + "layers-0-2-4", gpu.file.config));
    auto e3_single = gpu.runner.eagle_runner(gpu.file, load_eagle_layer(kFixtures + "default", gpu.file.config));
    EagleDrafter e2(*e2_runner, {.top_k = 2, .depth = 3, .nodes = 6});
    EagleDrafter e3(*e3_runner, {.top_k = 2, .depth = 3, .nodes = 6});
    EagleDrafter e3s(*e3_single, {.top_k = 2, .depth = 3, .nodes = 6});
    std::vector<GenerationStats> first(3);
    for (int round = 0; round < 3; ++round)
        for (int which = 0; which < 3; ++which) {
            EagleDrafter& d = which == 0 ? e2 : which == 1 ? e3 : e3s;
            CAPTURE(round, which);
            GenerationStats stats;
            CHECK(decode(gpu.runner, d, greedy_options(48), prompt, &stats) == expected);
            CHECK(stats.drafted > 0);
            if (round == 0) first[size_t(which)] = stats;
            else CHECK(stats.accepted == first[size_t(which)].accepted);  // the same drafts each round
        }
}
