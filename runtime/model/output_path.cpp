#include "model/output_path.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace medusa {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
    throw std::runtime_error(path + ": cannot write: " + why);
}

std::string folder_of(const std::string& path) {
    const fs::path parent = fs::path(path).parent_path();
    return parent.empty() ? "." : parent.string();
}

// Creating a file is the only test that holds for root, read-only mounts and ACLs alike.
void try_create_in(const std::string& folder, const std::string& shown) {
    std::string probe = folder + "/.medusa-write-test-" + std::to_string(::getpid()) + "-XXXXXX";
    const int fd = ::mkstemp(probe.data());
    if (fd < 0) refuse(shown, "cannot create a file in " + folder + ": " + std::strerror(errno));
    ::close(fd);
    ::unlink(probe.c_str());
}

bool is_stream(mode_t mode) { return S_ISFIFO(mode) || S_ISCHR(mode); }

}  // namespace

OutputKind classify_output_path(const std::string& path) {
    if (path.empty()) throw std::runtime_error("an output path is empty");
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno != ENOENT) refuse(path, std::strerror(errno));
        const std::string folder = folder_of(path);
        struct stat fst;
        if (::stat(folder.c_str(), &fst) != 0) refuse(path, folder + ": " + std::strerror(errno));
        if (!S_ISDIR(fst.st_mode)) refuse(path, folder + ": " + std::strerror(ENOTDIR));
        return OutputKind::NewFile;
    }
    if (S_ISLNK(st.st_mode)) {
        struct stat target;
        if (::stat(path.c_str(), &target) == 0 && is_stream(target.st_mode)) return OutputKind::Stream;
        std::error_code ec;
        const fs::path to = fs::read_symlink(path, ec);
        refuse(path, "it is a symbolic link (to " + (ec ? std::string("?") : to.string()) +
                         "): give the file itself, so that neither the link nor what it points to is overwritten "
                         "by surprise");
    }
    if (is_stream(st.st_mode)) return OutputKind::Stream;
    if (S_ISDIR(st.st_mode)) refuse(path, "it is a directory");
    if (!S_ISREG(st.st_mode)) refuse(path, S_ISBLK(st.st_mode) ? "it is a block device" : "it is a socket");
    return OutputKind::RegularFile;
}

OutputKind check_output_path(const std::string& path) {
    const OutputKind kind = classify_output_path(path);
    if (kind != OutputKind::Stream) try_create_in(folder_of(path), path);
    return kind;
}

void check_output_folder(const std::string& dir) {
    if (dir.empty()) throw std::runtime_error("an output folder is empty");
    // The folder itself when it exists, else the nearest folder above it, where it will be made:
    // nothing is created yet, so a run that fails before its first file leaves nothing behind.
    fs::path at = fs::path(dir);
    std::error_code ec;
    while (!fs::exists(at, ec) && at.has_relative_path() && at.has_parent_path() && at.parent_path() != at)
        at = at.parent_path();
    if (!fs::exists(at, ec)) at = ".";
    if (!fs::is_directory(at, ec)) refuse(dir, at.string() + ": " + std::strerror(ENOTDIR));
    try_create_in(at.string(), dir);
}

}  // namespace medusa
