// This process's resident memory, for the soaks that check it stays flat.
#pragma once
#include <unistd.h>

#include <cstddef>
#include <fstream>

namespace medusa::test {

inline double resident_mb() {
    std::ifstream statm("/proc/self/statm");
    size_t pages = 0, resident = 0;
    statm >> pages >> resident;
    return double(resident) * double(::sysconf(_SC_PAGESIZE)) / (1 << 20);
}

}  // namespace medusa::test
