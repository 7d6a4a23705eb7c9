// Runs `medusa` as a child with a time limit and reports its exit, stderr and peak memory:
// hostile input must fail fast, cleanly and within memory bounded by the file's size.
#pragma once
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace medusa::test {

struct ChildResult {
    int exit_code = -1;  // 128 + signal when killed
    std::string err;
    long max_rss_kb = 0;
};

// No shell: the arguments reach the program as given. SIGALRM ends a child that hangs (a FIFO read).
inline ChildResult run_limited(const std::string& bin, const std::vector<std::string>& args, unsigned seconds = 20) {
    char err_path[] = "/tmp/medusa_child_errXXXXXX";
    const int err_fd = mkstemp(err_path);
    ChildResult r;
    if (err_fd < 0) return r;
    const pid_t pid = fork();
    if (pid == 0) {
        const int null_fd = ::open("/dev/null", O_RDWR);
        dup2(null_fd, 0);
        dup2(null_fd, 1);
        dup2(err_fd, 2);
        alarm(seconds);
        std::vector<char*> argv{const_cast<char*>(bin.c_str())};
        for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        execv(bin.c_str(), argv.data());
        _exit(127);
    }
    close(err_fd);
    int status = 0;
    struct rusage ru {};
    if (pid > 0 && wait4(pid, &status, 0, &ru) == pid) {
        r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        r.max_rss_kb = ru.ru_maxrss;
    }
    r.err = slurp(err_path);
    std::remove(err_path);
    return r;
}

inline ChildResult run_medusa_limited(const std::vector<std::string>& args, unsigned seconds = 20) {
    return run_limited(medusa_bin(), args, seconds);
}

}  // namespace medusa::test
