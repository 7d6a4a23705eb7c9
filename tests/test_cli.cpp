// End-to-end: the `medusa` executable as a user runs it.
#include <catch2/catch.hpp>

#include <fstream>

#include "cli_runner.h"
#include "temp_dir.h"
#include "test_paths.h"

using medusa::test::model_path;
using medusa::test::run_medusa;

namespace {
const std::string kStory =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day, she saw a "
    "big, red ball.";

std::string generate_args(const std::string& model, const std::string& extra = "") {
    return "generate -m " + model_path(model) + " --tokenizer " + model_path("tok512.model") +
           " -p 'Once upon a time' -n 40 --temp 0 " + extra;
}
}  // namespace

TEST_CASE("medusa generate prints the known greedy story of stories260K", "[cli]") {
    auto r = run_medusa(generate_args("stories260K.bin"));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.rfind(kStory, 0) == 0);
}

TEST_CASE("GPU and CPU reference print the same text for every model file", "[cli]") {
    for (const char* m : {"stories260K.bin", "llama2xs.bin", "stories260K_q80.bin", "gguf/stories260K-f32.gguf",
                          "gguf/llama2xs-f32.gguf", "gguf/llama2xs-q8_0.gguf", "gguf/llama2xs-q4_0.gguf"}) {
        CAPTURE(m);
        auto gpu = run_medusa(generate_args(m));
        auto cpu = run_medusa(generate_args(m, "--cpu"));
        INFO(gpu.err + cpu.err);
        REQUIRE(gpu.exit_code == 0);
        REQUIRE(cpu.exit_code == 0);
        CHECK(gpu.out == cpu.out);
        CHECK(gpu.out.size() > 60);
    }
}

TEST_CASE("the f32 GGUF files give the same text as the llama2.c files", "[cli]") {
    auto a = run_medusa(generate_args("stories260K.bin"));
    auto b = run_medusa("generate -m " + model_path("gguf/stories260K-f32.gguf") +
                        " -p 'Once upon a time' -n 40 --temp 0");  // its own embedded vocabulary
    INFO(b.err);
    REQUIRE(b.exit_code == 0);
    CHECK(a.out == b.out);
    auto c = run_medusa(generate_args("llama2xs.bin"));
    auto d = run_medusa("generate -m " + model_path("gguf/llama2xs-f32.gguf") + " -p 'Once upon a time' -n 40 --temp 0");
    CHECK(c.out == d.out);
}

TEST_CASE("sampling is deterministic for a seed and differs across seeds", "[cli]") {
    auto base = "generate -m " + model_path("stories260K.bin") + " --tokenizer " + model_path("tok512.model") +
                " -p 'Once upon a time' -n 60 --temp 1.0 --top-p 0.9 ";
    auto a = run_medusa(base + "--seed 7"), b = run_medusa(base + "--seed 7"), c = run_medusa(base + "--seed 8");
    REQUIRE(a.exit_code == 0);
    CHECK(a.out == b.out);
    CHECK(a.out != c.out);
}

TEST_CASE("bad input gets a clear error and a non-zero exit", "[cli-errors]") {
    SECTION("missing model file") {
        auto r = run_medusa("generate -m /nonexistent/model.bin -p hi -n 3");
        CHECK(r.exit_code != 0);
        CHECK(r.err.find("/nonexistent/model.bin") != std::string::npos);
    }
    SECTION("tokenizer vocabulary differs from the model's") {
        auto r = run_medusa("generate -m " + model_path("stories260K.bin") + " --tokenizer " +
                            model_path("llama2-tokenizer.model") + " -p hi -n 3 --cpu");
        CHECK(r.exit_code != 0);
        CHECK(r.err.find("llama2-tokenizer.model") != std::string::npos);
        CHECK(r.err.find("512") != std::string::npos);
    }
    SECTION("truncated model file") {
        std::ifstream in(model_path("stories260K.bin"), std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), {});
        const std::string path = "/tmp/medusa_truncated_model.bin";
        std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size() / 2));
        auto r = run_medusa("generate -m " + path + " --tokenizer " + model_path("tok512.model") + " -p hi -n 3");
        CHECK(r.exit_code != 0);
        CHECK(r.err.find(path) != std::string::npos);
        std::remove(path.c_str());
    }
    SECTION("bad flag value") {
        auto r = run_medusa("generate -m " + model_path("stories260K.bin") + " -n lots");
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("-n") != std::string::npos);
    }
}

TEST_CASE("reaching the end of the context stops with a note, not a crash", "[cli]") {
    // llama2xs has a 256-token context.
    auto r = run_medusa("generate -m " + model_path("llama2xs.bin") + " --tokenizer " + model_path("tok512.model") +
                        " -p 'Once upon a time' -n 1000 --temp 1 --seed 3");
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK((r.err.find("context") != std::string::npos || r.err.find("stop-token") != std::string::npos));
}

TEST_CASE("every drafter prints plain greedy decoding's text to the end of the context", "[cli]") {
    // llama2xs has a 256-token context: a 64-node Medusa tree must shrink near its end.
    const std::string base = "generate -m " + model_path("llama2xs.bin") + " --tokenizer " + model_path("tok512.model") +
                             " -p 'Once upon a time' -n 300 --temp 0 ";
    auto plain = run_medusa(base);
    INFO(plain.err);
    REQUIRE(plain.exit_code == 0);
    CHECK(plain.err.find("stop: context") != std::string::npos);
    for (const std::string& flags : std::vector<std::string>{"--heads init --tree mc_sim_7b_63", "--ngram 6 --ngram-branches 2",
                                    "--draft-model " + model_path("stories260K_q80.bin") + " --gamma 3",
                                    "--draft-model " + model_path("stories260K_q80.bin") + " --draft-tree 2",
                                    "--cpu --heads init --tree dense:2,2"}) {
        CAPTURE(flags);
        auto r = run_medusa(base + flags);
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(r.out == plain.out);
        CHECK(r.err.find("stop: context") != std::string::npos);
    }
}

TEST_CASE("top-k, top-p and the repetition penalty work in every mode, and a seed reproduces the text", "[cli]") {
    const std::string base = "generate -m " + model_path("stories260K.bin") + " --tokenizer " +
                             model_path("tok512.model") +
                             " -p 'Once upon a time' -n 50 --temp 0.9 --top-k 20 --top-p 0.9 --repeat-penalty 1.2 ";
    // The step controller shapes sampled steps by the cost model alone, so a seed reproduces the text
    // while the device's cost model stays the same: a private cache, which the first run fills.
    const medusa::test::TempDir cache("seed-cache");
    const std::string env = "MEDUSA_CACHE=" + cache.path.string();
    for (const std::string& flags : std::vector<std::string>{"", "--heads init --tree dense:2,2", "--ngram 4",
                                    "--draft-model " + model_path("stories260K_q80.bin") + " --draft-tree 2",
                                    "--speculate auto --draft-model " + model_path("stories260K_q80.bin"),
                                    "--fixed-shape --ngram 4"}) {
        CAPTURE(flags);
        auto a = run_medusa(base + flags + " --seed 4", env), b = run_medusa(base + flags + " --seed 4", env),
             c = run_medusa(base + flags + " --seed 5", env);
        INFO(a.err);
        REQUIRE(a.exit_code == 0);
        CHECK(a.out == b.out);
        CHECK(a.out != c.out);
    }
}

TEST_CASE("one drafter at a time", "[cli-errors]") {
    auto r = run_medusa("generate -m " + model_path("stories260K.bin") + " --ngram 4 --heads init -p hi -n 3");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("choose one drafter") != std::string::npos);
    auto g = run_medusa("generate -m " + model_path("stories260K.bin") + " --gamma 4 -p hi -n 3");
    CHECK(g.exit_code == 2);
    CHECK(g.err.find("--draft-model") != std::string::npos);
    auto n = run_medusa("generate -m " + model_path("stories260K.bin") + " --temp nan -p hi -n 3");
    CHECK(n.exit_code == 2);
    CHECK(n.err.find("--temp") != std::string::npos);
}
