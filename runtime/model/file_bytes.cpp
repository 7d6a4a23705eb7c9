#include "model/file_bytes.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace medusa {

namespace {

const char* kind_of(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a plain file";
}

[[noreturn]] void fail_errno(const std::string& path, const char* what) {
    throw FormatError(path + ": " + what + ": " + std::strerror(errno));
}

}  // namespace

void require_regular_file(const std::string& path) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) throw FormatError(path + ": no such file or directory");
        fail_errno(path, "cannot open");
    }
    if (!S_ISREG(st.st_mode)) throw FormatError(path + ": not a regular file (" + kind_of(st.st_mode) + ")");
}

namespace {

// An open regular file: `path` after following links, opened without waiting on a FIFO.
struct OpenFile {
    int fd = -1;
    uint64_t size = 0;
    ~OpenFile() {
        if (fd >= 0) ::close(fd);
    }
};

void open_regular(const std::string& path, OpenFile& f) {
    require_regular_file(path);
    // O_NONBLOCK: should the path become a FIFO after the check, open must not wait for a writer.
    f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (f.fd < 0) fail_errno(path, "cannot open");
    struct stat st;
    if (::fstat(f.fd, &st) != 0) fail_errno(path, "cannot stat");
    if (!S_ISREG(st.st_mode)) throw FormatError(path + ": not a regular file (" + kind_of(st.st_mode) + ")");
    f.size = uint64_t(st.st_size);
}

// Reads bytes [0, n) of the file into `out`, which it sizes first (naming the file if that fails).
void read_into(const std::string& path, const OpenFile& f, uint64_t n, std::vector<uint8_t>& out) {
    try {
        out.resize(size_t(n));
    } catch (const std::bad_alloc&) {
        throw FormatError(path + ": its " + std::to_string(n) + " bytes do not fit in this machine's memory");
    }
    size_t done = 0;
    while (done < n) {
        const ssize_t got = ::pread(f.fd, out.data() + done, size_t(n) - done, off_t(done));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) fail_errno(path, "read error");
        if (got == 0) throw FormatError(path + ": the file shrank while it was read");
        done += size_t(got);
    }
}

}  // namespace

std::shared_ptr<const std::vector<uint8_t>> read_file_bytes(const std::string& path, uint64_t max_bytes) {
    OpenFile f;
    open_regular(path, f);
    if (f.size > max_bytes)
        throw FormatError(path + ": " + std::to_string(f.size) + " bytes is too large for this kind of file (at most " +
                          std::to_string(max_bytes) + ")");
    // Read exactly the size fstat reported: a file that grows meanwhile cannot make us read more.
    auto bytes = std::make_shared<std::vector<uint8_t>>();
    read_into(path, f, f.size, *bytes);
    return bytes;
}

FileHead read_file_head(const std::string& path, uint64_t head_bytes) {
    OpenFile f;
    open_regular(path, f);
    FileHead head;
    head.file_size = f.size;
    read_into(path, f, std::min(head_bytes, f.size), head.bytes);
    return head;
}

std::string read_text_file(const std::string& path, uint64_t max_bytes) {
    const auto bytes = read_file_bytes(path, max_bytes);
    return std::string(bytes->begin(), bytes->end());
}

}  // namespace medusa
