// The CLI against device limits and context sizes: a model too big for the device is refused
// with the numbers before any upload (no validation message), a file claiming a 2^20 context
// decodes in bounded memory, and --ctx-size sizes the cache without changing the text.
#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <iterator>

#include "cli_runner.h"
#include "cli_rusage.h"
#include "scoped_env.h"
#include "temp_dir.h"
#include "test_paths.h"

using medusa::test::model_path;
using medusa::test::run_medusa;
using medusa::test::run_medusa_limited;

namespace {

int lines(const std::string& s) { return int(std::count(s.begin(), s.end(), '\n')); }

// stories260K_q80.bin (llama2.c v2: magic, version, then the seven header ints) claiming a
// context of `positions`: the file stores no RoPE tables, so it stays 295 KB.
std::string with_context(const std::string& dir, int32_t positions) {
    std::ifstream in(model_path("stories260K_q80.bin"), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    std::memcpy(&bytes[8 + 6 * 4], &positions, 4);
    const std::string path = dir + "/ctx-" + std::to_string(positions) + ".bin";
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
}

const std::string kTok = model_path("tok512.model");

}  // namespace

TEST_CASE("device limits: bench of synthetic llama-7b q4_0 is refused with the numbers", "[cli-limits]") {
    // A 2 GiB heap, as lavapipe's: a GPU with room for 7B would otherwise load it.
    medusa::test::ScopedEnv cap("MEDUSA_HEAP_LIMIT", std::to_string(2ull << 30).c_str());
    const auto r = run_medusa_limited({"bench", "--synthetic", "llama-7b", "--dtype", "q4_0", "--validate", "--no-cpu",
                                       "--runs", "1", "--tokens", "1"},
                                      300);
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("medusa bench: error: synthetic:llama-7b: its q4_0 weights need 3.") != std::string::npos);
    CHECK(r.err.find("GiB but ") != std::string::npos);
    CHECK(r.err.find("[vulkan validation]") == std::string::npos);
}

TEST_CASE("device limits: a binding limit names the buffer, via the environment", "[cli-limits]") {
    medusa::test::ScopedEnv cap("MEDUSA_BUFFER_RANGE_LIMIT", "65536");
    const auto r = run_medusa("generate -m " + model_path("stories260K.bin") + " --tokenizer " + kTok +
                              " -p 'Once upon a time' -n 4 --temp 0 --validate");
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("tok_embeddings takes 128 KiB, past ") != std::string::npos);
    CHECK(r.err.find("maxStorageBufferRange of 64.0 KiB") != std::string::npos);
    CHECK(r.err.find("[vulkan validation]") == std::string::npos);
    CHECK(lines(r.err) == 1);
}

TEST_CASE("ctx-size: a file claiming a 2^20 context decodes in bounded memory", "[cli-limits]") {
    medusa::test::TempDir tmp("medusa-ctx");
    const std::string huge = with_context(tmp.path.string(), 1 << 20);
    const std::vector<std::string> gen = {"generate", "--tokenizer", kTok, "-p", "Once upon a time", "-n", "40",
                                          "--temp", "0", "--validate"};
    auto with = [&](const std::string& model, std::vector<std::string> extra = {}) {
        std::vector<std::string> a = gen;
        a.insert(a.begin() + 1, {"-m", model});
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    };
    const auto baseline = run_medusa_limited(with(model_path("stories260K_q80.bin")), 120);
    REQUIRE(baseline.exit_code == 0);

    const auto r = run_medusa_limited(with(huge), 120);
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.max_rss_kb < baseline.max_rss_kb + 64 * 1024);
    CAPTURE(baseline.max_rss_kb, r.max_rss_kb);

    // Asked for all of it: refused before allocating, naming the file, the size and the way out.
    const auto all = run_medusa_limited(with(huge, {"--ctx-size", "1048576"}), 120);
    INFO(all.err);
    CHECK(all.exit_code == 1);
    CHECK(all.err.find(huge + ": the KV cache for 1048576 positions needs ") != std::string::npos);
    CHECK(all.err.find("use --ctx-size ") != std::string::npos);
    CHECK(lines(all.err) == 1);
    CHECK(all.max_rss_kb < baseline.max_rss_kb + 64 * 1024);
}

TEST_CASE("ctx-size: the same greedy text with and without it, on the GPU and the CPU", "[cli-limits]") {
    const std::string base = "generate -m " + model_path("stories260K.bin") + " --tokenizer " + kTok +
                             " -p 'Once upon a time' -n 40 --temp 0 ";
    for (const std::string engine : {"", "--cpu "}) {
        CAPTURE(engine);
        const auto plain = run_medusa(base + engine);
        REQUIRE(plain.exit_code == 0);
        for (const std::string& flags : std::vector<std::string>{"--ctx-size 64", "-c 200", "--ctx-size 64 --heads init --tree mc_sim_7b_63",
                                        "-c 64 --draft-model " + model_path("stories260K_q80.bin")}) {
            CAPTURE(flags);
            const auto r = run_medusa(base + engine + flags);
            INFO(r.err);
            REQUIRE(r.exit_code == 0);
            CHECK(r.out == plain.out);
        }
    }
}

TEST_CASE("ctx-size: smaller than the prompt, zero, or past the trained context", "[cli-limits]") {
    const std::string base =
        "generate -m " + model_path("stories260K.bin") + " --tokenizer " + kTok + " -p 'Once upon a time' -n 8 --temp 0 ";
    const auto small = run_medusa(base + "--ctx-size 3");
    INFO(small.err);
    CHECK(small.exit_code == 2);
    CHECK(small.err.find("tokens, more than the context of 3 that --ctx-size gives") != std::string::npos);

    const auto zero = run_medusa(base + "-c 0");
    CHECK(zero.exit_code == 2);
    CHECK(zero.err.find("--ctx-size must be at least 1") != std::string::npos);

    // Reaching the end of a small context stops as at the model's own end.
    const auto end = run_medusa(base + "-n 100 --ctx-size 20");
    INFO(end.err);
    CHECK(end.exit_code == 0);
    CHECK(end.err.find("reached the end of the context (20 tokens") != std::string::npos);
    CHECK(end.err.find("stop: context") != std::string::npos);

    // Past the 512 positions stories260K was trained for: allowed, with a warning, as llama.cpp does.
    const auto past = run_medusa(base + "--ctx-size 1024");
    INFO(past.err);
    CHECK(past.exit_code == 0);
    CHECK(past.err.find("warning: --ctx-size 1024 is past the 512 positions") != std::string::npos);
}
