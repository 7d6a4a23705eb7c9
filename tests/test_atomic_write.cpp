// Files the program writes appear whole or not at all: a failed write reports the path and the
// system's reason, leaves no temporary file and leaves an existing file untouched.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "cli_rusage.h"
#include "model/atomic_file.h"
#include "temp_dir.h"
#include "test_paths.h"

using namespace medusa;
namespace fs = std::filesystem;
using medusa::test::TempDir;

namespace {

std::string read_text(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("a file is written whole and replaces the old one", "[atomic-write]") {
    TempDir dir("medusa-atomic");
    const fs::path p = dir.path / "out.json";
    write_file_atomically(p.string(), "first\n");
    write_file_atomically(p.string(), "second\n");
    CHECK(read_text(p) == "second\n");
    CHECK(dir.entries() == 1);
    CHECK((fs::status(p).permissions() & fs::perms::owner_read) != fs::perms::none);
}

TEST_CASE("a write that cannot happen names the path and the reason", "[atomic-write]") {
    TempDir dir("medusa-atomic");
    const fs::path file = dir.path / "plain";
    write_file_atomically(file.string(), "x");
    const std::string target = (file / "out.json").string();  // its parent is a regular file
    try {
        write_file_atomically(target, "data");
        FAIL("no error");
    } catch (const std::runtime_error& e) {
        CHECK_THAT(std::string(e.what()), Catch::StartsWith(target + ": cannot write") && Catch::Contains("Not a directory"));
    }
    CHECK(dir.entries() == 1);
}

TEST_CASE("a write that fails half-way leaves the old file and no temporary", "[atomic-write]") {
    TempDir dir("medusa-atomic");
    const fs::path p = dir.path / "tree.json";
    write_file_atomically(p.string(), "good\n");
    // A child whose files may not grow past 100 bytes: its write fails with EFBIG.
    const pid_t pid = fork();
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        const rlimit lim{100, 100};
        setrlimit(RLIMIT_FSIZE, &lim);
        try {
            write_file_atomically(p.string(), std::string(10000, 'x'));
        } catch (const std::runtime_error& e) {
            const std::string msg = e.what();
            _exit(msg.find(p.string() + ": cannot write (write): File too large") == 0 ? 0 : 2);
        }
        _exit(1);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(read_text(p) == "good\n");
    CHECK(dir.entries() == 1);
}

TEST_CASE("medusa export-heads into a path under a regular file fails with one line", "[atomic-write]") {
    TempDir dir("medusa-atomic");
    const fs::path file = dir.path / "plain";
    write_file_atomically(file.string(), "x");
    const std::string out = (file / "heads").string();
    const auto r = medusa::test::run_medusa_limited(
        {"export-heads", "-m", medusa::test::model_path("stories260K.bin"), "--heads", "init", "--out", out});
    CHECK(r.exit_code == 1);
    CHECK(r.err.find(out) != std::string::npos);
    CHECK(r.err.find("Not a directory") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(read_text(file) == "x");
}

TEST_CASE("medusa generate --trace writes its trace whole, or fails with one line", "[atomic-write]") {
    TempDir dir("medusa-atomic");
    const fs::path trace = dir.path / "steps.jsonl";
    const std::vector<std::string> gen = {"generate", "-m", medusa::test::model_path("stories260K.bin"), "--tokenizer",
                                          medusa::test::model_path("tok512.model"), "-p", "Once", "-n", "5", "--cpu"};
    auto with_trace = [&](const std::string& path) {
        std::vector<std::string> a = gen;
        a.insert(a.end(), {"--trace", path});
        return medusa::test::run_medusa_limited(a);
    };
    const auto ok = with_trace(trace.string());
    CHECK(ok.exit_code == 0);
    const std::string text = read_text(trace);
    CHECK(std::count(text.begin(), text.end(), '\n') >= 1);
    CHECK(text.rfind("{", 0) == 0);
    CHECK(dir.entries() == 1);  // no temporary left behind
    const std::string bad = (trace / "x.jsonl").string();  // under a regular file
    const auto r = with_trace(bad);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find(bad + ": cannot write") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(read_text(trace) == text);
}
