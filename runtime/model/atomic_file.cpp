#include "model/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace medusa {

void write_file_atomically(const std::string& path, std::string_view bytes) {
    auto fail = [&](const char* step, int err) {
        throw std::runtime_error(path + ": cannot write (" + step + "): " + std::strerror(err));
    };
    // Same folder as the target, so the rename never crosses file systems.
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    std::string tmp = (parent.empty() ? std::string(".") : parent.string()) + "/." +
                      std::filesystem::path(path).filename().string() + ".tmpXXXXXX";
    const int fd = ::mkstemp(tmp.data());
    if (fd < 0) fail("create a temporary file", errno);
    auto abandon = [&](const char* step) {
        const int err = errno;
        ::close(fd);
        ::unlink(tmp.c_str());
        fail(step, err);
    };
    for (size_t done = 0; done < bytes.size();) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) abandon("write");
        done += size_t(n);
    }
    // mkstemp makes 0600; a written file gets the usual permissions.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    if (::fchmod(fd, 0666 & ~mask) != 0) abandon("chmod");
    if (::fsync(fd) != 0) abandon("fsync");
    if (::close(fd) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        fail("close", err);
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        fail("rename", err);
    }
}

}  // namespace medusa
