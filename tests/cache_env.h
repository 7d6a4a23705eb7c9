// MEDUSA_CACHE pointed at a folder for a scope (a test's own cache), then put back as it was.
#pragma once
#include <string>

#include "scoped_env.h"

namespace medusa::test {

struct ScopedCacheDir : ScopedEnv {
    explicit ScopedCacheDir(const std::string& dir) : ScopedEnv("MEDUSA_CACHE", dir.c_str()) {}
};

}  // namespace medusa::test
