// Runs `medusa` as a child with a time limit and reports its exit, stderr and its own peak memory:
// hostile input must fail fast, cleanly and within bounded memory.
#pragma once
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace medusa::test {

struct ChildResult {
    int exit_code = -1;  // 128 + signal when killed
    std::string err;
    long max_rss_kb = 0;
};

// The launcher that measures a child's own peak memory (tests/peak_rss), built beside the tests.
inline std::string peak_rss_launcher() {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? "./medusa_peak_rss" : (self.parent_path() / "medusa_peak_rss").string();
}

// No shell: the arguments reach the program as given. SIGALRM ends a child that hangs (a FIFO read).
// The program runs under the peak_rss launcher, so max_rss_kb is its own peak, not this process's.
inline ChildResult run_limited(const std::string& bin, const std::vector<std::string>& args, unsigned seconds = 20) {
    char err_path[] = "/tmp/medusa_child_errXXXXXX", rss_path[] = "/tmp/medusa_child_rssXXXXXX";
    const int err_fd = mkstemp(err_path), rss_fd = mkstemp(rss_path);
    ChildResult r;
    if (err_fd < 0 || rss_fd < 0) return r;
    close(rss_fd);
    const std::string launcher = peak_rss_launcher(), limit = std::to_string(seconds);
    const pid_t pid = fork();
    if (pid == 0) {
        const int null_fd = ::open("/dev/null", O_RDWR);
        dup2(null_fd, 0);
        dup2(null_fd, 1);
        dup2(err_fd, 2);
        alarm(seconds + 10);  // the launcher's own guard; the program's alarm is the launcher's to set
        std::vector<char*> argv{const_cast<char*>(launcher.c_str()), rss_path, const_cast<char*>(limit.c_str()),
                                const_cast<char*>(bin.c_str())};
        for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        execv(launcher.c_str(), argv.data());
        _exit(127);
    }
    close(err_fd);
    int status = 0;
    if (pid > 0 && waitpid(pid, &status, 0) == pid)
        r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.max_rss_kb = std::atol(slurp(rss_path).c_str());
    r.err = slurp(err_path);
    std::remove(err_path);
    std::remove(rss_path);
    return r;
}

inline ChildResult run_medusa_limited(const std::vector<std::string>& args, unsigned seconds = 20) {
    return run_limited(medusa_bin(), args, seconds);
}

}  // namespace medusa::test
