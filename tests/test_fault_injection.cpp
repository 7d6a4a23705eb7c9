// What a full disk, a kill and Ctrl-C do to `medusa train-heads` and `medusa generate`, with the
// real system calls made to fail (tests/fault_shim preloaded): a checkpoint is one unit, so a run
// killed at any rename resumes to exactly the heads of an uninterrupted run; a full disk fails
// with the path and errno and leaves no empty or half-written file; Ctrl-C stops after a step,
// with a checkpoint or the statistics, and exit code 130.
#include <signal.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "cli_runner.h"
#include "temp_dir.h"
#include "test_paths.h"

namespace fs = std::filesystem;
using medusa::test::CliResult;
using medusa::test::run_medusa;
using medusa::test::slurp;
using medusa::test::TempDir;

namespace {

// tests/fault_shim, built beside this test executable ($MEDUSA_FAULT_SHIM overrides).
std::string shim_env(const std::string& faults) {
    const char* env = std::getenv("MEDUSA_FAULT_SHIM");
    const fs::path shim = env ? fs::path(env) : fs::read_symlink("/proc/self/exe").parent_path() / "libmedusa_fault_shim.so";
    REQUIRE(fs::exists(shim));
    return "LD_PRELOAD=" + shim.string() + " " + faults;
}

// 12 steps with a checkpoint every 4: enough renames (data, three checkpoints, final heads) to
// kill between any two files, in about a second.
std::string train_args(const fs::path& out, bool resume = false) {
    using medusa::test::model_path;
    return "train-heads -m " + model_path("stories260K.bin") + " --tokenizer " + model_path("tok512.model") +
           " --heads 2 --steps 12 --sequences 8 --max-len 64 --batch 32 --checkpoint-every 4 --out " + out.string() +
           (resume ? " --resume" : "");
}

std::string heads_of(const fs::path& out) { return slurp((out / "medusa_lm_head.safetensors").string()); }

// Every file under `dir` that is empty or a leftover temporary.
std::vector<std::string> broken_files(const fs::path& dir) {
    std::vector<std::string> bad;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        const std::string name = e.path().filename().string();
        if ((e.is_regular_file() && e.file_size() == 0) || name.find(".tmp") != std::string::npos ||
            name.find(".staging") != std::string::npos || name.find(".previous") != std::string::npos)
            bad.push_back(e.path().string());
    }
    return bad;
}

// Starts `medusa ARGS...`, reads its stderr until `marker` appears, sends `sig`, and returns its
// exit code (128 + signal when killed) and all of its stderr.
std::pair<int, std::string> signal_when(const std::vector<std::string>& args, const std::string& marker, int sig) {
    int err_pipe[2];
    REQUIRE(pipe(err_pipe) == 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclose(&actions, err_pipe[0]);
    std::vector<std::string> argv_s = {medusa::test::medusa_bin()};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    REQUIRE(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) == 0);
    posix_spawn_file_actions_destroy(&actions);
    close(err_pipe[1]);
    std::string err;
    bool sent = false;
    char buf[4096];
    for (ssize_t n; (n = read(err_pipe[0], buf, sizeof buf)) > 0;) {
        err.append(buf, size_t(n));
        if (!sent && err.find(marker) != std::string::npos) sent = kill(pid, sig) == 0;
    }
    close(err_pipe[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), err};
}

const std::string& uninterrupted_heads() {
    static const std::string heads = [] {
        TempDir dir("medusa-fault-straight");
        const CliResult r = run_medusa(train_args(dir.path));
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        return heads_of(dir.path);
    }();
    return heads;
}

}  // namespace

TEST_CASE("train-heads killed at any file's rename resumes to the heads of an uninterrupted run", "[fault-injection]") {
    const std::string& straight = uninterrupted_heads();
    REQUIRE(straight.size() > 1000);
    // Renames 1-2: the training text; 3-14: three checkpoints of three files and a folder swap each.
    for (int k = 1; k <= 14; ++k) {
        TempDir dir("medusa-fault-kill");
        const CliResult killed = run_medusa(train_args(dir.path), shim_env("MEDUSA_FAULT_KILL_AT_RENAME=" + std::to_string(k)));
        INFO("killed at rename " << k << ": " << killed.err);
        REQUIRE(killed.exit_code == 128 + 9);
        const CliResult resumed = run_medusa(train_args(dir.path, true));
        INFO(resumed.err);
        REQUIRE(resumed.exit_code == 0);
        CHECK(heads_of(dir.path) == straight);
        CHECK(broken_files(dir.path).empty());
    }
}

TEST_CASE("a full disk fails train-heads with the path and errno, and --resume then finishes the same run",
          "[fault-injection]") {
    const std::string& straight = uninterrupted_heads();
    // Byte budgets: nothing at all, inside the training text, inside the first checkpoint's moments,
    // inside the second checkpoint (the first one stays whole).
    for (const long long budget : {0LL, 100000LL, 600000LL, 1500000LL}) {
        TempDir dir("medusa-fault-full");
        const CliResult full = run_medusa(train_args(dir.path), shim_env("MEDUSA_FAULT_ENOSPC_AFTER=" + std::to_string(budget)));
        INFO("disk full after " << budget << " bytes: " << full.err);
        CHECK(full.exit_code == 1);
        CHECK_THAT(full.err, Catch::Contains("medusa train-heads: error: " + dir.path.string()) &&
                                 Catch::Contains("No space left on device"));
        CHECK(std::count(full.err.begin(), full.err.end(), '\n') < 40);  // progress lines and one error line
        CHECK(broken_files(dir.path).empty());
        const CliResult resumed = run_medusa(train_args(dir.path, true));
        INFO(resumed.err);
        REQUIRE(resumed.exit_code == 0);
        CHECK(heads_of(dir.path) == straight);
    }
}

TEST_CASE("Ctrl-C during training saves a checkpoint after the step, exits 130, and --resume finishes the same run",
          "[interrupt]") {
    const std::string& straight = uninterrupted_heads();
    TempDir dir("medusa-fault-sigint");
    // Rename 7: the second checkpoint is being written when the signal comes.
    const CliResult stopped = run_medusa(train_args(dir.path), shim_env("MEDUSA_FAULT_SIGINT_AT_RENAME=7"));
    INFO(stopped.err);
    CHECK(stopped.exit_code == 130);
    CHECK_THAT(stopped.err, Catch::Contains("interrupted: " + (dir.path / "checkpoint").string()) &&
                                Catch::Contains("--resume"));
    CHECK_FALSE(fs::exists(dir.path / "medusa_lm_head.safetensors"));  // unfinished heads are not offered as a result
    CHECK(broken_files(dir.path).empty());
    const CliResult resumed = run_medusa(train_args(dir.path, true));
    INFO(resumed.err);
    REQUIRE(resumed.exit_code == 0);
    CHECK_THAT(resumed.err, Catch::Contains("resuming from"));
    CHECK(heads_of(dir.path) == straight);
}

TEST_CASE("Ctrl-C during generation ends the text after a step, prints the statistics and exits 130", "[interrupt]") {
    using medusa::test::model_path;
    const std::string args = "generate -m " + model_path("stories260K.bin") + " --tokenizer " +
                             model_path("tok512.model") + " -p 'Once upon a time' -n 200 --temp 0 --heads init --tree chain:2";
    const CliResult whole = run_medusa(args);
    REQUIRE(whole.exit_code == 0);
    // Generation flushes once after the prompt and once per step: the signal comes at step 4.
    const CliResult cut = run_medusa(args, shim_env("MEDUSA_FAULT_SIGINT_AT_FLUSH=5"));
    INFO(cut.err);
    CHECK(cut.exit_code == 130);
    CHECK_THAT(cut.err, Catch::Contains("medusa generate: interrupted after") && Catch::Contains("(stop: cancelled)"));
    const std::string text = cut.out.substr(0, cut.out.size() - 1);  // the closing newline
    CHECK(text.size() > std::string("Once upon a time").size());
    CHECK(text.size() < whole.out.size() / 2);
    CHECK(whole.out.rfind(text, 0) == 0);  // what was printed is the uninterrupted text's beginning
}

TEST_CASE("Ctrl-C while the model writes its training text stops at once, keeps no partial text, exits 130",
          "[interrupt]") {
    using medusa::test::model_path;
    TempDir dir("medusa-fault-sigint-text");
    const auto [code, err] = signal_when({"train-heads", "-m", model_path("stories260K.bin"), "--tokenizer",
                                          model_path("tok512.model"), "--heads", "2", "--sequences", "100000",
                                          "--out", dir.path.string()},
                                         "sequences written by the model", SIGINT);
    INFO(err);
    CHECK(code == 130);
    CHECK_THAT(err, Catch::EndsWith("medusa train-heads: interrupted\n"));
    CHECK_FALSE(fs::exists(dir.path / "train_data.safetensors"));
    CHECK(broken_files(dir.path).empty());
}

TEST_CASE("a full disk fails bench --json, export-heads and export-gguf with the path and keeps the old files",
          "[fault-injection]") {
    using medusa::test::model_path;
    TempDir dir("medusa-fault-full-outputs");
    const fs::path json = dir.path / "bench.json", heads = dir.path / "heads", gguf = dir.path / "model.gguf";
    std::ofstream(json) << "old\n";
    const std::string model = " -m " + model_path("stories260K.bin") + " --tokenizer " + model_path("tok512.model");
    const CliResult bench =
        run_medusa("bench" + model + " --runs 1 --tokens 16 --json " + json.string(), shim_env("MEDUSA_FAULT_ENOSPC_AFTER=0"));
    CHECK(bench.exit_code == 1);
    CHECK_THAT(bench.err, Catch::EndsWith("medusa bench: error: " + json.string() +
                                          ": cannot write (write): No space left on device\n"));
    CHECK(slurp(json.string()) == "old\n");
    const CliResult exported = run_medusa("export-heads -m " + model_path("stories260K.bin") + " --heads init --out " + heads.string(),
                                          shim_env("MEDUSA_FAULT_ENOSPC_AFTER=100"));
    CHECK(exported.exit_code == 1);
    CHECK_THAT(exported.err, Catch::Contains(heads.string()) && Catch::Contains("No space left on device"));
    std::ofstream(gguf) << "old gguf\n";
    const CliResult converted = run_medusa("export-gguf" + model + " --out " + gguf.string(),
                                           shim_env("MEDUSA_FAULT_ENOSPC_AFTER=100000"));
    CHECK(converted.exit_code == 1);
    CHECK_THAT(converted.err, Catch::Contains(gguf.string()) && Catch::Contains("No space left on device"));
    CHECK(slurp(gguf.string()) == "old gguf\n");
    CHECK(broken_files(dir.path).empty());
}
