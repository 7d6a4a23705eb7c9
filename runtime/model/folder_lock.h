// One writer per output folder: two trainers given the same --out would write the same staging
// folder and checkpoint and each resume the other's half-written step. The lock is an flock on
// DIR/.lock, so the kernel releases it when the holder exits, however it exits.
#pragma once
#include <string>

namespace medusa {

class FolderLock {
public:
    // Creates `dir` if needed and takes its lock, or throws std::runtime_error "DIR: ..." naming the
    // process that holds it.
    explicit FolderLock(const std::string& dir);
    ~FolderLock();
    FolderLock(const FolderLock&) = delete;
    FolderLock& operator=(const FolderLock&) = delete;

private:
    int fd_ = -1;
};

}  // namespace medusa
