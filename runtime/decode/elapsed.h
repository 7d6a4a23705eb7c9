// Wall time since a moment, in milliseconds: what the decoder and the step controller time.
#pragma once
#include <chrono>

namespace medusa {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace medusa
