// A user's long text costs bounded memory and time before it is refused or tokenized: a prompt
// that cannot fit the context is refused by its bytes before tokenizing (`bench --prompts`), and a
// text file is tokenized in pieces (`tokenize --file`). Tokenized whole, one 20 MB prompt took
// 4.7 GB and 10 s before "more than the context", and 20 MB to tokenize 4.6 GB.
#include <catch2/catch.hpp>

#include <chrono>
#include <nlohmann/json.hpp>

#include "cache_env.h"
#include "cli_rusage.h"
#include "cli_runner.h"
#include "file_text.h"
#include "model/tokenizer.h"
#include "temp_dir.h"
#include "test_paths.h"

using namespace medusa;
using namespace medusa::test;

namespace {

// Lines of a story, `bytes` long.
std::string story(size_t bytes) {
    const std::string line = "Tom saw a cat. The cat was big and red, and it liked to play in the park.\n";
    std::string out;
    out.reserve(bytes + line.size());
    while (out.size() < bytes) out += line;
    return out;
}

std::vector<std::string> bench(const std::string& prompts) {
    return {"bench", "-m", model_path("stories260K.bin"), "--tokenizer", model_path("tok512.model"), "--runs", "1",
            "--tokens", "8", "--max-block", "8", "--no-cpu", "--compare", "ar", "--prompts", prompts};
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("bench --prompts refuses a 20 MB prompt by its bytes, in bounded memory and time", "[bench][cli][bounds]") {
    TempDir dir("medusa-prompt-bytes");
    const std::string small = (dir.path / "small.json").string(), huge = (dir.path / "huge.json").string();
    write_text(small, nlohmann::json::array({"Tom saw a cat."}).dump());
    write_text(huge, nlohmann::json::array({"Tom saw a cat.", story(20'000'000)}).dump());
    const ScopedCacheDir cache(dir.path.string());  // the cost model bench measures goes there
    const ChildResult fits = run_medusa_limited(bench(small), 120);
    INFO(fits.err);
    REQUIRE(fits.exit_code == 0);
    const auto t0 = std::chrono::steady_clock::now();
    const ChildResult r = run_medusa_limited(bench(huge), 120);
    const double took = seconds_since(t0);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    // Every figure computed here: the context (512), 8 new tokens, a verified block of 128, and
    // tok512's longest piece.
    const Tokenizer tok = Tokenizer::from_file(model_path("tok512.model"));
    const size_t room = 512 - 8 - 128, longest = tok.longest_token_bytes();
    CHECK(longest >= 4);
    const std::string expected = huge + ": prompt 2 has " + std::to_string(story(20'000'000).size()) +
                                 " bytes: more than the context of 512 positions holds with 8 new tokens and a "
                                 "verified block (--tokens, -c): " + std::to_string(room) + " tokens of at most " +
                                 std::to_string(longest) + " bytes, " + std::to_string(room * longest) + " bytes\n";
    CHECK_THAT(r.err, Catch::EndsWith(expected));
    // The file read and parsed, nothing tokenized: what the same run with a small file takes, plus
    // the text a few times over (20 MB each), not the gigabytes tokenizing it whole took.
    CHECK(r.max_rss_kb < fits.max_rss_kb + 150 * 1024);
    CHECK(took < 60);
}

TEST_CASE("tokenize --file tokenizes 20 MB in pieces, in bounded memory", "[tokenizer][cli][bounds]") {
    TempDir dir("medusa-tokenize-file");
    const std::string small = (dir.path / "small.txt").string(), huge = (dir.path / "huge.txt").string();
    // A small file prints the ids of the whole text, BOS first when asked.
    const std::string text = story(200'000);
    write_text(small, text);
    const Tokenizer tok = Tokenizer::from_file(model_path("tok512.model"));
    const auto r = run_medusa("tokenize -m " + model_path("stories260K.bin") + " --bos --file " + small);
    REQUIRE(r.exit_code == 0);
    CHECK(nlohmann::json::parse(r.out).get<std::vector<int>>() == tok.encode(text, true));
    // 20 MB: the file, and one 64 KiB piece's tokenizing at a time.
    write_text(huge, story(20'000'000));
    const ChildResult big = run_medusa_limited({"tokenize", "-m", model_path("stories260K.bin"), "--file", huge}, 120);
    INFO(big.err);
    CHECK(big.exit_code == 0);
    CHECK(big.err.empty());
    CHECK(big.max_rss_kb < 150 * 1024);
}
