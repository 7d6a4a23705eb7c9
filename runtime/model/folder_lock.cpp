#include "model/folder_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace medusa {

FolderLock::FolderLock(const std::string& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw std::runtime_error(dir + ": cannot create the folder: " + ec.message());
    const std::string path = (std::filesystem::path(dir) / ".lock").string();
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd_ < 0) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        char holder[32] = {};
        const ssize_t n = ::pread(fd_, holder, sizeof holder - 1, 0);
        ::close(fd_);
        if (err != EWOULDBLOCK) throw std::runtime_error(path + ": cannot lock: " + std::strerror(err));
        throw std::runtime_error(dir + ": another process (" +
                                 (n > 0 ? "pid " + std::string(holder, size_t(n)) : std::string("unknown")) +
                                 ") is writing into this folder: wait for it to finish or choose another --out");
    }
    // Who holds it, for the message another process gets (the lock holds without this note).
    const std::string pid = std::to_string(::getpid());
    const bool noted = ::ftruncate(fd_, 0) == 0 && ::pwrite(fd_, pid.data(), pid.size(), 0) == ssize_t(pid.size());
    (void)noted;
}

FolderLock::~FolderLock() {
    if (fd_ >= 0) ::close(fd_);
}

}  // namespace medusa
