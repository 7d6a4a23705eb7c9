// `bench --prompts FILE`: a user's own prompts measured as a prompt set of their own, and a file
// that is not a JSON array of prompt strings refused before any work, naming the file.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "temp_dir.h"
#include "test_paths.h"

using medusa::test::model_path;
using medusa::test::run_medusa;
using medusa::test::slurp;
using nlohmann::json;

namespace {

std::string write(const std::filesystem::path& path, const std::string& text) {
    std::ofstream(path) << text;
    return path.string();
}

std::string bench(const std::string& flags) {
    return "bench -m " + model_path("stories260K.bin") + " --tokenizer " + model_path("tok512.model") +
           " --runs 1 --tokens 8 --max-block 8 --no-cpu " + flags;
}

}  // namespace

TEST_CASE("bench --prompts measures the file's prompts as a set of their own", "[bench][cli]") {
    medusa::test::TempDir dir("medusa-prompts");
    const std::string prompts = write(dir.path / "my_text.json", R"(["Tom saw a cat.", "Lily had a red ball."])");
    const std::string out = (dir.path / "bench.json").string();
    const auto r = run_medusa(bench("--compare ar,ngram --prompts " + prompts + " --json " + out));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const json sets = json::parse(slurp(out))["compare"]["prompt_sets"];
    REQUIRE(sets.contains("my_text"));
    REQUIRE(sets.contains("stories"));
    for (const char* mode : {"plain", "ngram"}) {  // "ar" on the command line: plain decoding's key
        CAPTURE(mode);
        CHECK(sets["my_text"][mode]["tokens"].get<int>() == 2 * 8);  // every mode decodes as many tokens
    }
    CHECK(r.out.find("prompts: my_text (2, 8 new tokens each)") != std::string::npos);
}

TEST_CASE("bench --prompts refuses a file that is not an array of prompt strings, naming it", "[bench][cli]") {
    medusa::test::TempDir dir("medusa-prompts-bad");
    const std::vector<std::pair<std::string, std::string>> cases = {
        {R"({"prompts": ["a"]})", "not a JSON array of prompt strings (it is a object)"},
        {"[]", "holds no prompts"},
        {R"(["a", 3])", "prompt 2 is a number, not a string"},
        {R"(["a", ""])", "prompt 2 is empty"},
        {"[\"a\", ", "malformed JSON"},
    };
    for (const auto& [text, why] : cases) {
        CAPTURE(text);
        const std::string file = write(dir.path / "p.json", text);
        const auto r = run_medusa(bench("--compare ar --prompts " + file));
        CHECK(r.exit_code == 1);
        CHECK_THAT(r.err, Catch::Contains(file + ": " + why));
        CHECK(r.err.find("measuring") == std::string::npos);  // refused before any work
    }
    std::string long_prompt = "[\"";
    for (int i = 0; i < 400; ++i) long_prompt += "Tom saw a cat. ";
    const std::string file = write(dir.path / "long.json", long_prompt + "\"]");
    const auto r = run_medusa(bench("--compare ar --prompts " + file));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(file + ": prompt 1 has"));
    CHECK_THAT(r.err, Catch::Contains("more than the context of"));
}
