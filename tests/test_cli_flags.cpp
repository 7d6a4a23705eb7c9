// Number flags: NaN, infinities and words are refused with one line naming the flag, in the
// `medusa` CLI and in medusa-chat (whose flags are parsed before any window opens); every
// command's --help, held against its parser's table.
#include <catch2/catch.hpp>

#include <cctype>
#include <filesystem>
#include <map>
#include <sstream>

#include "cli_rusage.h"
#include "command_flags.h"
#include "test_paths.h"

using medusa::test::model_path;
using medusa::test::run_medusa_limited;
namespace fs = std::filesystem;

TEST_CASE("medusa refuses non-finite sampling flags", "[cli-errors][flags]") {
    for (const char* flag : {"--temp", "--top-p", "--repeat-penalty", "--typical-eps"}) {
        for (const char* value : {"nan", "inf", "-inf", "1e99", "0.5x"}) {
            CAPTURE(flag, value);
            const auto r = run_medusa_limited({"generate", "-m", model_path("stories260K.bin"), "--tokenizer",
                                               model_path("tok512.model"), "-p", "hi", "-n", "2", "--cpu", flag, value});
            CHECK(r.exit_code == 2);
            CHECK(r.err.find(flag) != std::string::npos);
            CHECK(r.err.find(value) != std::string::npos);
            CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        }
    }
}

TEST_CASE("medusa-chat refuses a word or NaN where a number goes", "[cli-errors][flags]") {
    const fs::path chat = fs::path(medusa::test::medusa_bin()).parent_path() / "app" / "chat" / "medusa-chat";
    if (!fs::exists(chat)) {
        WARN("medusa-chat is not built (MEDUSA_APP=OFF)");
        return;
    }
    struct Case {
        const char *flag, *value;
    };
    for (const Case& c : {Case{"--steps", "abc"}, Case{"--steps", "0"}, Case{"--steps", "12x"}, Case{"--temp", "nan"},
                          Case{"--top-p", "nan"}, Case{"--repeat-penalty", "inf"}, Case{"--gamma", ""}}) {
        CAPTURE(c.flag, c.value);
        const auto r = medusa::test::run_limited(chat.string(), {c.flag, c.value, "--screenshot", "/nonexistent/x.png"});
        CHECK(r.exit_code == 2);  // a usage error, as medusa's
        CHECK(r.err.find(std::string(c.flag) + " expects") != std::string::npos);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
}

TEST_CASE("medusa COMMAND --help prints that command's usage, the drafters' flags with generate's", "[flags]") {
    for (const char* cmd : {"generate", "tree", "tokenize", "info", "bench", "train-heads", "train-eagle", "tune-tree",
                            "plot", "export-heads", "export-gguf"}) {
        CAPTURE(cmd);
        const auto r = medusa::test::run_medusa(std::string(cmd) + " --help");
        CHECK(r.exit_code == 0);
        CHECK(r.out.rfind("usage: medusa\n  " + std::string(cmd) + " ", 0) == 0);
        // Every entry it prints is this command's (its continuation lines are indented deeper).
        std::istringstream lines(r.out);
        for (std::string line; std::getline(lines, line);)
            if (line.size() > 2 && line.compare(0, 2, "  ") == 0 && line[2] != ' ')
                CHECK(line.rfind("  " + std::string(cmd) + " ", 0) == 0);
    }
    const auto generate = medusa::test::run_medusa("generate -h");
    for (const char* flag : {"--heads", "--draft-model", "--ngram", "--eagle DIR", "--eagle-nodes", "--accept"})
        CHECK_THAT(generate.out, Catch::Contains(flag));
    CHECK(generate.out.find("  bench ") == std::string::npos);  // only generate's part
    const auto joint = medusa::test::run_medusa("train-heads --help");
    CHECK_THAT(joint.out, Catch::Contains("train-heads --joint"));  // both of its entries
    CHECK(medusa::test::run_medusa("nonsense --help").exit_code == 2);
}

TEST_CASE("every command's --help names every flag its parser accepts", "[flags]") {
    // Short forms the usage writes instead of the long ones.
    const std::map<std::string, std::string> short_forms = {
        {"--model", "-m"}, {"--prompt", "-p"}, {"--n-predict", "-n"}, {"--ctx-size", "-c"}};
    auto names = [](const std::string& help, const std::string& flag) {
        for (size_t at = help.find(flag); at != std::string::npos; at = help.find(flag, at + 1)) {
            const char before = at ? help[at - 1] : ' ', after = at + flag.size() < help.size() ? help[at + flag.size()] : ' ';
            if (!std::isalnum(static_cast<unsigned char>(before)) && before != '-' &&
                !std::isalnum(static_cast<unsigned char>(after)) && after != '-')
                return true;
        }
        return false;
    };
    for (const auto& [command, table] : medusa::cli::command_flags()) {
        CAPTURE(command);
        const std::string name = command.substr(0, command.find(' '));  // train-heads --joint: train-heads's help
        const auto r = medusa::test::run_medusa(name + " --help");
        REQUIRE(r.exit_code == 0);
        for (const auto* group : {&table.flags, &table.options})
            for (const std::string& flag : *group) {
                CAPTURE(flag);
                const auto alias = short_forms.find(flag);
                CHECK((names(r.out, flag) || (alias != short_forms.end() && names(r.out, alias->second))));
            }
    }
}

TEST_CASE("a misspelt flag is refused with the nearest flag the command has", "[flags]") {
    const auto typo = medusa::test::run_medusa("generate --tmep 0 -p x");
    CHECK(typo.exit_code == 2);
    CHECK(typo.err == "medusa generate: unknown option --tmep (did you mean --temp?)\n");
    CHECK_THAT(medusa::test::run_medusa("bench --compar ar").err, Catch::Contains("(did you mean --compare?)"));
    const auto far = medusa::test::run_medusa("generate --zzzzz");
    CHECK(far.exit_code == 2);
    CHECK(far.err == "medusa generate: unknown option --zzzzz\n");  // nothing near: no guess
}

