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

bool emit_first_token(StepTrace& first_step, int first, const std::vector<int>& stop_tokens, int max_new_tokens,
                      GenerationStats& stats, const std::function<bool(const StepTrace&)>& on_step) {
    stats.stop_reason = "length";
    if (max_new_tokens <= 0) return false;
    first_step.emitted = {first};
    if (!keep_step_tokens(first_step.emitted, stop_tokens, max_new_tokens, stats)) return false;
    if (on_step(first_step)) return true;
    stats.stop_reason = "cancelled";
    return false;
}

}  // namespace medusa
