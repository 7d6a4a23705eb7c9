// A temporary folder for one test process, emptied at creation and removed with everything in it.
#pragma once
#include <unistd.h>

#include <filesystem>
#include <iterator>
#include <string>

namespace medusa::test {

struct TempDir {
    std::filesystem::path path;
    explicit TempDir(const std::string& prefix)
        : path(std::filesystem::temp_directory_path() / (prefix + "-" + std::to_string(::getpid()))) {
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    size_t entries() const { return size_t(std::distance(std::filesystem::directory_iterator(path), {})); }
};

}  // namespace medusa::test
