// An environment variable set (or unset, for nullptr) for a scope, then put back as it was.
#pragma once
#include <cstdlib>
#include <string>

namespace medusa::test {

struct ScopedEnv {
    std::string name, old;
    bool had = false;
    ScopedEnv(const char* n, const char* value) : name(n) {
        if (const char* c = std::getenv(n)) old = c, had = true;
        if (value) ::setenv(n, value, 1);
        else ::unsetenv(n);
    }
    ~ScopedEnv() {
        if (had) ::setenv(name.c_str(), old.c_str(), 1);
        else ::unsetenv(name.c_str());
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;
};

}  // namespace medusa::test
