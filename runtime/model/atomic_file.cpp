#include "model/atomic_file.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include "model/output_path.h"

namespace medusa {

namespace {

// A killed writer cannot remove its temporary: the next writer of the same file does, once the
// process named in the temporary's name is gone (a live one may still be writing it).
void remove_stale_temporaries(const std::string& parent, const std::string& prefix) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(parent, ec)) {
        const std::string name = e.path().filename().string();
        if (name.rfind(prefix, 0) != 0) continue;
        const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
        if (pid > 0 && ::kill(pid_t(pid), 0) != 0 && errno == ESRCH) ::unlink(e.path().c_str());
    }
}

}  // namespace

AtomicFileWriter::AtomicFileWriter(std::string path) : path_(std::move(path)) {
    if (classify_output_path(path_) == OutputKind::Stream) {  // else the temporary below tries the folder
        // No O_CREAT, no O_TRUNC: the FIFO or device is written as it is (a FIFO waits for a reader).
        fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (fd_ < 0) fail("open", errno);
        stream_ = true;
        return;
    }
    // Same folder as the target, so the rename never crosses file systems.
    const std::filesystem::path p(path_);
    const std::string parent = p.parent_path().empty() ? std::string(".") : p.parent_path().string();
    const std::string prefix = "." + p.filename().string() + ".tmp-";
    remove_stale_temporaries(parent, prefix);
    tmp_ = parent + "/" + prefix + std::to_string(::getpid()) + "-XXXXXX";
    fd_ = ::mkstemp(tmp_.data());
    if (fd_ < 0) {
        tmp_.clear();
        fail("create a temporary file", errno);
    }
    // mkstemp makes 0600; a written file gets the usual permissions.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    if (::fchmod(fd_, 0666 & ~mask) != 0) fail("chmod", errno);
}

AtomicFileWriter::~AtomicFileWriter() {
    if (fd_ >= 0) ::close(fd_);
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

void AtomicFileWriter::fail(const char* step, int err) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
    tmp_.clear();
    throw std::runtime_error(path_ + ": cannot write (" + step + "): " + std::strerror(err));
}

void AtomicFileWriter::write(std::string_view bytes) {
    if (fd_ < 0) throw std::logic_error(path_ + ": written after commit");
    // A FIFO whose reader left raises SIGPIPE, which would end the process without a word: held
    // back during the write (and discarded), it becomes EPIPE and an error naming the path.
    sigset_t pipe_only, before;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    if (stream_) pthread_sigmask(SIG_BLOCK, &pipe_only, &before);
    int err = 0;
    for (size_t done = 0; done < bytes.size();) {
        const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            err = n < 0 ? errno : EIO;
            break;
        }
        done += size_t(n);
    }
    if (stream_) {
        const timespec now{0, 0};
        while (sigtimedwait(&pipe_only, nullptr, &now) == SIGPIPE) {
        }
        pthread_sigmask(SIG_SETMASK, &before, nullptr);
    }
    if (err) fail("write", err);
}

void AtomicFileWriter::commit() {
    if (fd_ < 0) throw std::logic_error(path_ + ": committed twice");
    if (stream_) {
        const int fd = fd_;
        fd_ = -1;
        if (::close(fd) != 0) fail("close", errno);
        return;
    }
    if (::fsync(fd_) != 0) fail("fsync", errno);
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail("close", errno);
    if (std::rename(tmp_.c_str(), path_.c_str()) != 0) fail("rename", errno);
    tmp_.clear();  // it is the file now
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
    AtomicFileWriter f(path);
    f.write(bytes);
    f.commit();
}

void write_files_atomically(const std::vector<FileContents>& files) {
    std::vector<std::unique_ptr<AtomicFileWriter>> writers;
    for (const FileContents& f : files) {
        writers.push_back(std::make_unique<AtomicFileWriter>(f.path));
        writers.back()->write(f.bytes);
    }
    for (auto& w : writers) w->commit();
}

}  // namespace medusa
