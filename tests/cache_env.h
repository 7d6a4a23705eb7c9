// MEDUSA_CACHE pointed at a folder for a scope (a test's own cache), then put back as it was.
#pragma once
#include <cstdlib>
#include <string>

namespace medusa::test {

struct ScopedCacheDir {
    std::string old;
    bool had = false;
    explicit ScopedCacheDir(const std::string& dir) {
        if (const char* c = std::getenv("MEDUSA_CACHE")) old = c, had = true;
        ::setenv("MEDUSA_CACHE", dir.c_str(), 1);
    }
    ~ScopedCacheDir() {
        if (had) ::setenv("MEDUSA_CACHE", old.c_str(), 1);
        else ::unsetenv("MEDUSA_CACHE");
    }
    ScopedCacheDir(const ScopedCacheDir&) = delete;
    ScopedCacheDir& operator=(const ScopedCacheDir&) = delete;
};

}  // namespace medusa::test
