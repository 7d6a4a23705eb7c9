// A real `medusa serve` process for the tests: started on a free port (--port 0; the port is read
// from the line stderr says it listens on), ready once GET /health answers, stopped by a signal
// with its exit code kept. Its stderr stays readable while it runs.
#pragma once
#include <fcntl.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cli_runner.h"

namespace medusa::test {

class ServeProcess {
public:
    explicit ServeProcess(const std::vector<std::string>& args) {
        char err_path[] = "/tmp/medusa_serve_errXXXXXX";
        const int err_fd = mkstemp(err_path);
        if (err_fd < 0) throw std::runtime_error("no temporary file for medusa serve's stderr");
        err_path_ = err_path;
        const std::string bin = medusa_bin();
        std::vector<std::string> all = {bin, "serve", "--port", "0"};
        all.insert(all.end(), args.begin(), args.end());
        pid_ = fork();
        if (pid_ == 0) {
            const int null_fd = ::open("/dev/null", O_RDWR);
            dup2(null_fd, 0);
            dup2(null_fd, 1);
            dup2(err_fd, 2);
            std::vector<char*> argv;
            for (auto& a : all) argv.push_back(a.data());
            argv.push_back(nullptr);
            execv(bin.c_str(), argv.data());
            _exit(127);
        }
        close(err_fd);
        const std::regex listening("listening on http://127\\.0\\.0\\.1:([0-9]+)");
        for (auto start = std::chrono::steady_clock::now(); port_ == 0;) {
            std::smatch m;
            const std::string text = err();
            if (std::regex_search(text, m, listening)) port_ = std::stoi(m[1]);
            else if (exited() || std::chrono::steady_clock::now() - start > std::chrono::seconds(120))
                throw std::runtime_error("medusa serve did not start: " + text);
            else std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        if (auto r = client().Get("/health"); !r || r->status != 200)
            throw std::runtime_error("medusa serve listens but GET /health fails: " + err());
    }
    ~ServeProcess() {
        if (exit_code_ < 0 && pid_ > 0) stop(SIGKILL);
        std::remove(err_path_.c_str());
    }
    ServeProcess(const ServeProcess&) = delete;
    ServeProcess& operator=(const ServeProcess&) = delete;

    int port() const { return port_; }
    std::string err() const { return slurp(err_path_); }
    httplib::Client client() const {
        httplib::Client c("127.0.0.1", port_);
        c.set_read_timeout(60);
        return c;
    }
    // Sends `sig` and waits for the exit: its code, 128 + the signal when one killed it.
    int stop(int sig = SIGTERM) {
        if (exit_code_ >= 0) return exit_code_;
        kill(pid_, sig);
        int status = 0;
        waitpid(pid_, &status, 0);
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return exit_code_;
    }
    // Polls stderr until it holds `text` (false after `seconds`).
    bool wait_for_err(const std::string& text, int seconds = 20) const {
        for (auto start = std::chrono::steady_clock::now(); std::chrono::steady_clock::now() - start < std::chrono::seconds(seconds);) {
            if (err().find(text) != std::string::npos) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return false;
    }

private:
    bool exited() {
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return true;
    }
    pid_t pid_ = -1;
    int port_ = 0;
    int exit_code_ = -1;
    std::string err_path_;
};

}  // namespace medusa::test
