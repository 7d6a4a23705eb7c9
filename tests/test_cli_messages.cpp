// What the command line says when something is off: text from a file cannot drive the terminal,
// a context too large for the CPU reference is refused with one that fits (not std::bad_alloc), a
// tiny valid number is a number, a heads file that does not fit the tree is named, and heads of
// NaN are reported once instead of silently drafting nothing.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "cli_runner.h"
#include "cli_rusage.h"
#include "file_text.h"
#include "temp_dir.h"
#include "test_paths.h"

namespace fs = std::filesystem;
using medusa::test::model_path;
using medusa::test::read_text;
using medusa::test::TempDir;
using medusa::test::write_text;

namespace {

size_t lines(const std::string& s) { return size_t(std::count(s.begin(), s.end(), '\n')); }

std::string generate(const std::string& extra) {
    return "generate -m " + model_path("stories260K.bin") + " --tokenizer " + model_path("tok512.model") +
           " -p 'Once upon a time' -n 24 " + extra;
}

}  // namespace

TEST_CASE("an escape sequence from a file reaches the terminal escaped, on one line", "[cli-messages]") {
    TempDir dir("medusa-messages");
    std::string gguf = read_text(model_path("gguf/stories260K-f32.gguf"));
    // general.architecture's value, "llama", becomes ESC [2J (clear the screen) and a '!'.
    const size_t key = gguf.find("general.architecture");
    REQUIRE(key != std::string::npos);
    const size_t value = key + std::strlen("general.architecture") + 4 + 8;
    REQUIRE(gguf.compare(value, 5, "llama") == 0);
    gguf.replace(value, 5, "\x1b[2J!");
    const fs::path file = dir.path / "escape.gguf";
    write_text(file, gguf);
    const auto r = medusa::test::run_medusa_limited({"info", "-m", file.string()});
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Catch::Contains("architecture '\\x1B[2J!' is not supported"));
    CHECK(r.err.find('\x1b') == std::string::npos);
    CHECK(lines(r.err) == 1);
}

TEST_CASE("a context the CPU reference cannot hold is refused with one that fits", "[cli-messages]") {
    const auto r = medusa::test::run_medusa(generate("--cpu --ctx-size 2000000000"));
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Catch::Contains(model_path("stories260K.bin") + ": the CPU reference needs") &&
                          Catch::Contains("for 2000000000 positions, more than this machine's") &&
                          Catch::Contains("use --ctx-size"));
    CHECK(r.err.find("bad_alloc") == std::string::npos);
}

TEST_CASE("a tiny temperature is a number, and decodes as the greedy text", "[cli-messages]") {
    const auto tiny = medusa::test::run_medusa(generate("--temp 1e-45"));
    const auto greedy = medusa::test::run_medusa(generate("--temp 0"));
    INFO(tiny.err);
    REQUIRE(tiny.exit_code == 0);
    REQUIRE(greedy.exit_code == 0);
    CHECK(tiny.out == greedy.out);
    CHECK(medusa::test::run_medusa(generate("--temp 1e39")).exit_code == 2);  // past a float: refused
}

TEST_CASE("heads that do not fit the tree, or hold NaN, are named", "[cli-messages]") {
    TempDir dir("medusa-messages");
    const fs::path heads = dir.path / "heads";
    REQUIRE(medusa::test::run_medusa("export-heads -m " + model_path("stories260K.bin") +
                                     " --heads init --num-heads 2 --out " + heads.string())
                .exit_code == 0);
    const std::string file = (heads / "medusa_lm_head.safetensors").string();
    const auto deep = medusa::test::run_medusa(generate("--heads " + heads.string() + " --tree chain:4"));
    CHECK(deep.exit_code == 2);  // a usage error: the flags ask for what the file cannot give
    CHECK_THAT(deep.err, Catch::Contains(file + ": the tree is 4 levels deep but only 2 Medusa heads are loaded"));

    // Head 2's first block weight, all NaN: the tensor is the file's second (Medusa's names sort so).
    std::string bytes = read_text(file);
    uint64_t header_len = 0;
    std::memcpy(&header_len, bytes.data(), 8);
    const std::string header = bytes.substr(8, header_len);
    const size_t entry = header.find("\"1.0.linear.weight\"");
    REQUIRE(entry != std::string::npos);
    const size_t offsets = header.find("data_offsets", entry);
    const size_t begin = std::stoul(header.substr(header.find('[', offsets) + 1));
    const float nan = std::nanf("");
    for (size_t i = 0; i < 64 * 64; ++i) std::memcpy(&bytes[8 + header_len + begin + 4 * i], &nan, 4);
    write_text(file, bytes);
    const auto r = medusa::test::run_medusa(generate("--temp 0 --heads " + heads.string() + " --tree chain:2"));
    INFO(r.err);
    CHECK(r.exit_code == 0);
    const std::string warning = "warning: " + file + ": head 2 holds NaN or infinite weights: it never guesses";
    const size_t at = r.err.find(warning);  // a line of its own (after any progress line), once
    REQUIRE(at != std::string::npos);
    CHECK((at == 0 || r.err[at - 1] == '\n'));
    CHECK(r.err.find(warning, at + 1) == std::string::npos);
}

TEST_CASE("a file that is not heads, given as --heads, is named for what it is", "[cli-messages]") {
    struct Case {
        std::string file, says;
    };
    const Case cases[] = {
        {model_path("gguf/llama2xs-q4_0.gguf"), ": a GGUF model (architecture 'llama'), not Medusa heads: --heads takes"},
        {MEDUSA_SHARED_DIR "/testdata/eagle3/stories260K-eagle3-llamacpp-f16.gguf",
         ": an EAGLE-3 draft layer (GGUF), not Medusa heads: give it to --eagle"},
        {model_path("llama2xs.bin"), ": neither a safetensors file nor a PyTorch checkpoint, so not Medusa heads"},
        {model_path("tok512.model"), ": neither a safetensors file nor a PyTorch checkpoint, so not Medusa heads"},
        {std::string(MEDUSA_SOURCE_DIR) + "/tests/data/torch/int64_medusa_lm_head.pt",
         ": tensor '0.0.linear.weight' holds int64 values; Medusa heads' weights are floating point"},
    };
    for (const Case& c : cases) {
        CAPTURE(c.file);
        const auto r = medusa::test::run_medusa_limited({"generate", "-m", model_path("stories260K.bin"), "--tokenizer",
                                                         model_path("tok512.model"), "-p", "Once", "-n", "2", "--heads",
                                                         c.file});
        CHECK(r.exit_code == 1);
        CHECK_THAT(r.err, Catch::Contains(c.file + c.says));
        CHECK(lines(r.err) == 1);
    }
}

TEST_CASE("safetensors heads with integer weights are refused naming the type", "[cli-messages]") {
    TempDir dir("medusa-int-heads");
    // One I64 matrix under Medusa's first key, written by hand: 64 x 64 zeros.
    const std::string header = R"({"0.0.linear.weight":{"dtype":"I64","shape":[64,64],"data_offsets":[0,32768]}})";
    std::string file(8, '\0');
    const uint64_t n = header.size();
    std::memcpy(file.data(), &n, 8);
    file += header + std::string(32768, '\0');
    const fs::path heads = dir.path / "medusa_lm_head.safetensors";
    write_text(heads, file);
    const auto r = medusa::test::run_medusa(generate("--heads " + heads.string()));
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Catch::Contains(heads.string() + ": tensor '0.0.linear.weight' holds int64 values"));
}

TEST_CASE("messages name the flag as typed, help and --version answer briefly, chat templates are all listed",
          "[cli-messages]") {
    const auto n = medusa::test::run_medusa(generate("-n abc"));
    CHECK(n.exit_code == 2);
    CHECK_THAT(n.err, Catch::Contains("-n expects an integer, got 'abc'") && !Catch::Contains("--n-predict"));
    const auto help = medusa::test::run_medusa("help generate");
    CHECK(help.exit_code == 0);
    CHECK_THAT(help.out, Catch::Contains("  generate -m MODEL") && !Catch::Contains("  train-heads"));
    const auto version = medusa::test::run_medusa("--version");
    CHECK(version.exit_code == 0);
    CHECK(version.out == "medusa " MEDUSA_VERSION "\n");
    const auto unknown = medusa::test::run_medusa("help nosuch");
    CHECK(unknown.exit_code == 2);
    CHECK(lines(unknown.err) == 1);
    const auto command = medusa::test::run_medusa("nosuch");
    CHECK(command.exit_code == 2);
    CHECK(lines(command.err) == 1);
    const auto tmpl = medusa::test::run_medusa(generate("--chat-template nosuch"));
    CHECK(tmpl.exit_code == 2);
    CHECK_THAT(tmpl.err, Catch::Contains("llama3") && Catch::Contains("chatml") && Catch::Contains("none"));
    // Every name listed is one --chat-template takes.
    for (const char* name : {"vicuna_v1.1", "llama2_chat", "zephyr", "chatml", "llama3", "none"}) {
        CAPTURE(name);
        CHECK_THAT(tmpl.err, Catch::Contains(name));
        CHECK(medusa::test::run_medusa(generate(std::string("-n 1 --chat-template ") + name)).exit_code == 0);
    }
}

TEST_CASE("a drafter the step controller never used is reported as such, not as 0.00 accepted", "[cli-messages]") {
    const std::string draft = " --draft-model " + model_path("stories260K_q80.bin");
    const auto controlled = medusa::test::run_medusa(generate("-n 8" + draft));
    REQUIRE(controlled.exit_code == 0);
    INFO(controlled.err);
    // On lavapipe the controller decodes stories260K plainly; either way the line says what happened.
    const bool plain = controlled.err.find("nothing drafted: the step controller decoded plainly on all ") != std::string::npos;
    const bool drafted = controlled.err.find("of drafted accepted") != std::string::npos &&
                         controlled.err.find("drafted on ") != std::string::npos;
    CHECK(plain != drafted);
    CHECK((controlled.err.find("0.00 of drafted accepted") == std::string::npos || drafted));
    const auto fixed = medusa::test::run_medusa(generate("-n 8 --fixed-shape" + draft));
    REQUIRE(fixed.exit_code == 0);
    CHECK_THAT(fixed.err, Catch::Contains("drafted on ") && Catch::Contains(" steps, ") &&
                              Catch::Contains("of drafted accepted"));
}
