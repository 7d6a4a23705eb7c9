// Output paths as an attacker (or a careless script) gives them: a FIFO or a device is written
// through and stays what it was (the atomic writer's rename would replace /dev/null itself when run
// as root), a symbolic link is refused with the link and its target untouched, a folder that cannot
// be written fails before any work, bytes that are not UTF-8 in a path do not break a JSON output,
// files that belong together are written as one unit, and one folder takes one trainer at a time.
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_rusage.h"
#include "file_text.h"
#include "model/atomic_file.h"
#include "model/folder_lock.h"
#include "model/safetensors_file.h"
#include "temp_dir.h"
#include "test_paths.h"

using namespace medusa;
namespace fs = std::filesystem;
using medusa::test::model_path;
using medusa::test::read_text;
using medusa::test::TempDir;
using medusa::test::write_text;

namespace {

// Reads a FIFO on a thread until its writer closes it (or 20 s pass): what a `cat FIFO` would see.
// The FIFO is opened without waiting, so a writer that replaced it instead of opening it cannot
// leave the test hanging.
class FifoReader {
public:
    explicit FifoReader(const fs::path& fifo) : fd_(::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)) {
        REQUIRE(fd_ >= 0);
        thread_ = std::thread([this] { run(); });
    }
    ~FifoReader() {
        if (thread_.joinable()) thread_.join();
        ::close(fd_);
    }
    std::string text() {
        thread_.join();
        return text_;
    }

private:
    void run() {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (std::chrono::steady_clock::now() < deadline) {
            pollfd p{fd_, POLLIN, 0};
            ::poll(&p, 1, 50);
            char buf[4096];
            const ssize_t n = ::read(fd_, buf, sizeof buf);
            if (n > 0) text_.append(buf, size_t(n)), seen_writer_ = true;
            else if (n == 0 && seen_writer_) return;  // the writer closed: end of file
            else if (n == 0 || (n < 0 && errno == EAGAIN)) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
    int fd_;
    bool seen_writer_ = false;
    std::string text_;
    std::thread thread_;
};

bool is_a_fifo(const fs::path& p) {
    struct stat st;
    return ::lstat(p.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

std::vector<std::string> generate_args(const std::vector<std::string>& extra) {
    std::vector<std::string> a = {"generate", "-m", model_path("stories260K.bin"), "--tokenizer", model_path("tok512.model"),
                                  "-p", "Once upon a time", "-n", "6", "--temp", "0"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

}  // namespace

TEST_CASE("a FIFO given as an output is written through and stays a FIFO", "[hostile-outputs]") {
    TempDir dir("medusa-outputs");
    const fs::path fifo = dir.path / "out.fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    {
        FifoReader reader(fifo);
        write_file_atomically(fifo.string(), "through the pipe\n");
        CHECK(reader.text() == "through the pipe\n");
    }
    CHECK(is_a_fifo(fifo));
    CHECK(dir.entries() == 1);  // no temporary beside it

    // Through the CLI: a trace read as it is written, as `medusa generate --trace FIFO & cat FIFO`.
    FifoReader reader(fifo);
    const auto r = medusa::test::run_medusa_limited(generate_args({"--trace", fifo.string()}));
    CHECK(r.exit_code == 0);
    const std::string trace = reader.text();
    CHECK(std::count(trace.begin(), trace.end(), '\n') >= 1);
    CHECK(nlohmann::json::parse(trace.substr(0, trace.find('\n'))).contains("emitted"));
    CHECK(is_a_fifo(fifo));
}

TEST_CASE("a FIFO whose reader left ends the write with an error naming it, not with SIGPIPE", "[hostile-outputs]") {
    TempDir dir("medusa-outputs");
    const fs::path fifo = dir.path / "gone.fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    // In a child: without the fix SIGPIPE would end the test process itself.
    const pid_t pid = fork();
    if (pid == 0) {
        const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
        AtomicFileWriter w(fifo.string());  // opens the write end: the reader is there
        ::close(reader);                    // and leaves
        try {
            w.write(std::string(1 << 20, 'x'));
        } catch (const std::runtime_error& e) {
            _exit(std::string(e.what()).find(fifo.string() + ": cannot write (write): Broken pipe") == 0 ? 0 : 2);
        }
        _exit(1);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(is_a_fifo(fifo));
}

TEST_CASE("a character device given as an output is written through and stays a device", "[hostile-outputs]") {
    TempDir dir("medusa-outputs");
    // A null device of our own where the system allows making one (root), so that a writer that
    // replaced it would replace nothing of the machine's; else a link to the machine's /dev/null.
    const fs::path own = dir.path / "null";
    const bool made = ::mknod(own.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0;
    const fs::path link = dir.path / "null-link";
    fs::create_symlink("/dev/null", link);
    for (const fs::path& p : made ? std::vector<fs::path>{own, link} : std::vector<fs::path>{link}) {
        CAPTURE(p);
        write_file_atomically(p.string(), "discarded\n");
        struct stat st;
        REQUIRE(::stat(p.c_str(), &st) == 0);
        CHECK(S_ISCHR(st.st_mode));
        CHECK(st.st_rdev == makedev(1, 3));
        const auto r = medusa::test::run_medusa_limited(generate_args({"--trace", p.string()}));
        CHECK(r.exit_code == 0);
        REQUIRE(::stat(p.c_str(), &st) == 0);
        CHECK(S_ISCHR(st.st_mode));
    }
    CHECK(fs::is_symlink(link));
    CHECK(fs::read_symlink(link) == "/dev/null");
    CHECK(dir.entries() == (made ? 2u : 1u));
}

TEST_CASE("a symbolic link, a directory or a missing folder as an output is refused and nothing changes",
          "[hostile-outputs]") {
    TempDir dir("medusa-outputs");
    const fs::path precious = dir.path / "precious.txt";
    write_file_atomically(precious.string(), "keep me\n");
    const fs::path link = dir.path / "trace.jsonl";
    fs::create_symlink(precious, link);
    const fs::path dangling = dir.path / "dangling.json";
    fs::create_symlink(dir.path / "nowhere.json", dangling);

    for (const fs::path& p : {link, dangling}) {
        CAPTURE(p);
        CHECK_THAT(error_of([&] { write_file_atomically(p.string(), "x"); }),
                   Catch::StartsWith(p.string() + ": cannot write: it is a symbolic link"));
        CHECK(fs::is_symlink(p));
    }
    CHECK(read_text(precious) == "keep me\n");
    CHECK_THAT(error_of([&] { write_file_atomically(dir.path.string(), "x"); }),
               Catch::StartsWith(dir.path.string() + ": cannot write: it is a directory"));

    // Through the CLI, before any work: no text is generated, no measuring starts.
    const auto r = medusa::test::run_medusa_limited(generate_args({"--trace", link.string()}));
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Catch::Contains(link.string() + ": cannot write: it is a symbolic link"));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    const std::string missing = (dir.path / "no-such-folder" / "bench.json").string();
    const auto b = medusa::test::run_medusa_limited(
        {"bench", "-m", model_path("stories260K.bin"), "--runs", "1", "--tokens", "4", "--json", missing});
    CHECK(b.exit_code == 1);
    CHECK_THAT(b.err, Catch::StartsWith("medusa bench: error: " + missing + ": cannot write") &&
                          Catch::Contains("No such file or directory"));
    CHECK(std::count(b.err.begin(), b.err.end(), '\n') == 1);  // no "measuring ..." line came first
    CHECK(read_text(precious) == "keep me\n");
    CHECK(fs::is_symlink(link));
}

TEST_CASE("files written as one unit: a failure on any leaves every old file as it was", "[hostile-outputs]") {
    TempDir dir("medusa-outputs");
    const fs::path weights = dir.path / "weights.bin", config = dir.path / "config.json";
    write_file_atomically(weights.string(), "old weights");
    write_file_atomically(config.string(), "old config");
    const std::string impossible = (weights / "config.json").string();  // under a regular file
    CHECK_THAT(error_of([&] { write_files_atomically({{weights.string(), "new weights"}, {impossible, "new config"}}); }),
               Catch::StartsWith(impossible + ": cannot write"));
    CHECK(read_text(weights) == "old weights");
    CHECK(read_text(config) == "old config");
    CHECK(dir.entries() == 2);
    write_files_atomically({{weights.string(), "new weights"}, {config.string(), "new config"}});
    CHECK(read_text(weights) == "new weights");
    CHECK(read_text(config) == "new config");
}

TEST_CASE("a path that is not UTF-8 reaches the JSON outputs without failing the command", "[hostile-outputs]") {
    TempDir dir("medusa-outputs");
    auto export_heads = [&](const std::string& heads, const std::string& count, const fs::path& out) {
        std::vector<std::string> a = {"export-heads", "-m", model_path("stories260K.bin"), "--heads", heads, "--out",
                                      out.string()};
        if (!count.empty()) a.insert(a.end(), {"--num-heads", count});
        return medusa::test::run_medusa_limited(a);
    };
    const fs::path out = dir.path / "heads";
    REQUIRE(export_heads("init", "2", out).exit_code == 0);
    // Heads in a folder named in Latin-1 ("sortie" with the byte E9 for the accent).
    const fs::path latin1 = dir.path / "sorti\xE9";
    REQUIRE(export_heads("init", "3", latin1).exit_code == 0);
    const auto r = export_heads(latin1.string(), "", out);  // config.json names its source, the Latin-1 path
    CAPTURE(r.err);
    CHECK(r.exit_code == 0);
    // Both files are the second export's: three heads, the source's byte written as U+FFFD.
    const nlohmann::json config = nlohmann::json::parse(read_text(out / "config.json"));
    CHECK(config["medusa_num_heads"] == 3);
    CHECK(config["base_model_name_or_path"].get<std::string>().find("sorti\xEF\xBF\xBD") != std::string::npos);
    const SafetensorsFile heads = SafetensorsFile::open((out / "medusa_lm_head.safetensors").string());
    CHECK(heads.find("2.0.linear.weight") != nullptr);
}

TEST_CASE("one trainer per output folder: a second one is refused naming the holder", "[hostile-outputs]") {
    TempDir dir("medusa-outputs");
    const fs::path out = dir.path / "run";
    {
        const FolderLock held(out.string());
        CHECK_THAT(error_of([&] { FolderLock again(out.string()); }),
                   Catch::StartsWith(out.string() + ": another process (pid " + std::to_string(::getpid()) + ")"));
        const auto r = medusa::test::run_medusa_limited(
            {"train-heads", "-m", model_path("stories260K.bin"), "--tokenizer", model_path("tok512.model"), "--heads",
             "2", "--steps", "4", "--sequences", "4", "--max-len", "32", "--out", out.string()});
        CHECK(r.exit_code == 1);
        CHECK_THAT(r.err, Catch::Contains(out.string() + ": another process (pid " + std::to_string(::getpid())));
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK_FALSE(fs::exists(out / "train_data.safetensors"));  // refused before writing anything
    }
    const FolderLock after(out.string());  // released with its holder
}
