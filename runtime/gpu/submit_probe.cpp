#include "gpu/submit_probe.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "gpu/command_sequence.h"

namespace medusa::gpu {

double measure_submit_ms(Context& ctx, int runs, std::chrono::microseconds spin) {
    CommandSequence seq(ctx);
    seq.begin();
    seq.end();
    seq.run();
    std::vector<double> ms;
    for (int r = 0; r < std::max(1, runs); ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        seq.submit();
        seq.wait(spin);
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
    return ms[ms.size() / 2];
}

}  // namespace medusa::gpu
