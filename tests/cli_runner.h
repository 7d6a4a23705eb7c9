// Runs the `medusa` executable built beside the tests and captures its output and exit code.
#pragma once
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace medusa::test {

struct CliResult {
    int exit_code = -1;
    std::string out;  // stdout
    std::string err;  // stderr
};

// $MEDUSA_BIN (CTest sets it), else the `medusa` built beside this test executable, so the tests
// find it whichever folder they are started from.
inline std::string medusa_bin() {
    if (const char* b = std::getenv("MEDUSA_BIN")) return b;
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? "./medusa" : (self.parent_path() / "medusa").string();
}

inline std::string slurp(const std::string& path) {
    std::string s;
    if (FILE* f = std::fopen(path.c_str(), "rb")) {
        std::array<char, 4096> buf;
        size_t n;
        while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) s.append(buf.data(), n);
        std::fclose(f);
    }
    return s;
}

// `args` is appended to the command line as written (quote what needs quoting); `env` goes
// before it ("NAME=value ...").
inline CliResult run_medusa(const std::string& args, const std::string& env = "") {
    char err_path[] = "/tmp/medusa_cli_errXXXXXX";
    int fd = mkstemp(err_path);
    if (fd >= 0) close(fd);
    const std::string cmd = env + (env.empty() ? "" : " ") + medusa_bin() + " " + args + " 2>" + err_path;
    CliResult r;
    if (FILE* p = popen(cmd.c_str(), "r")) {
        std::array<char, 4096> buf;
        size_t n;
        while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
        int status = pclose(p);
        r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    r.err = slurp(err_path);
    std::remove(err_path);
    return r;
}

}  // namespace medusa::test
