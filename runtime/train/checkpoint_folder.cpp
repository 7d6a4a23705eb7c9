#include "train/checkpoint_folder.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace fs = std::filesystem;

namespace medusa::train {

namespace {

[[noreturn]] void fail(const std::string& path, const char* step, int err) {
    throw std::runtime_error(path + ": cannot write the checkpoint (" + step + "): " + std::strerror(err));
}

// Renames and new files are durable only once their folder's entry list is.
void sync_folder(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) fail(path, "open folder", errno);
    const int rc = ::fsync(fd), err = errno;
    ::close(fd);
    if (rc != 0) fail(path, "fsync folder", err);
}

std::string parent_of(const std::string& dir) {
    const fs::path p = fs::path(dir).parent_path();
    return p.empty() ? "." : p.string();
}

std::string staging_of(const std::string& dir) { return dir + ".staging"; }
std::string previous_of(const std::string& dir) { return dir + ".previous"; }

void remove_folder(const std::string& path) {
    std::error_code ec;
    fs::remove_all(path, ec);
    if (ec) fail(path, "remove", ec.value());
}

}  // namespace

void commit_checkpoint(const std::string& dir, const std::function<void(const std::string&)>& write_files) {
    committed_checkpoint(dir);  // finish an interrupted swap before starting another
    const std::string staging = staging_of(dir);
    remove_folder(staging);  // a kill's half-written leftovers
    std::error_code ec;
    fs::create_directories(staging, ec);
    if (ec) fail(staging, "create folder", ec.value());
    try {
        write_files(staging);
        sync_folder(staging);
    } catch (...) {
        std::error_code ignored;  // the error being thrown says what went wrong; no half checkpoint stays
        fs::remove_all(staging, ignored);
        throw;
    }

    if (!fs::exists(dir)) {
        if (::rename(staging.c_str(), dir.c_str()) != 0) fail(dir, "rename", errno);
    } else if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) == 0) {
        remove_folder(staging);  // the old checkpoint, swapped out
    } else if (errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP) {
        // No atomic exchange here: move the old one aside, then the new one in. A kill between the
        // two renames leaves DIR.previous, which committed_checkpoint puts back.
        const std::string previous = previous_of(dir);
        remove_folder(previous);
        if (::rename(dir.c_str(), previous.c_str()) != 0) fail(dir, "rename aside", errno);
        if (::rename(staging.c_str(), dir.c_str()) != 0) fail(dir, "rename", errno);
        remove_folder(previous);
    } else {
        fail(dir, "exchange", errno);
    }
    sync_folder(parent_of(dir));
}

bool committed_checkpoint(const std::string& dir) {
    if (dir.empty()) return false;
    const std::string previous = previous_of(dir);
    if (!fs::exists(dir) && fs::exists(previous) && ::rename(previous.c_str(), dir.c_str()) != 0)
        fail(dir, "restore", errno);
    return fs::is_directory(dir);
}

}  // namespace medusa::train
