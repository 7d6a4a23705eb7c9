#include "decode/step_output.h"

#include <algorithm>

namespace medusa {

bool keep_step_tokens(std::vector<int>& emitted, const std::vector<int>& stop_tokens, int max_new_tokens,
                      GenerationStats& stats) {
    size_t kept = 0;
    bool stopped = false;
    for (; kept < emitted.size(); ++kept) {
        if (std::find(stop_tokens.begin(), stop_tokens.end(), emitted[kept]) != stop_tokens.end()) {
            stats.stop_reason = "stop-token";
            stopped = true;
            break;
        }
        if (stats.new_tokens + int(kept) >= max_new_tokens) break;
    }
    emitted.resize(kept);
    stats.new_tokens += int(kept);
    return !stopped;
}

}  // namespace medusa
