// Which drafter each step used, where the step controller chooses it step by step (auto) or falls
// back to plain decoding: the timeline's legend of drafter colours and the metrics' table of
// steps and tokens per drafter. Both draw nothing when no step was controlled.
#pragma once
#include <vector>

#include "step_log.h"

namespace medusa::chat {

// "Under each bar, its drafter:" and a swatch of drafter_color (palette.h) per drafter used.
void draw_drafter_legend(const std::vector<StepRecord>& steps);
// A turn's steps by drafter: steps, tokens, tokens per step.
void draw_drafter_table(const std::vector<const StepRecord*>& turn);

}  // namespace medusa::chat
