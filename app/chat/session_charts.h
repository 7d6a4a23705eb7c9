// This session's finished turns as charts, grouped by decoding mode: tokens/s (decode time only)
// and tokens per forward pass, beside plain decoding's when a plain turn was run.
#pragma once
#include <vector>

#include "chart.h"
#include "step_log.h"

namespace medusa::chat {

std::vector<charts::Chart> session_charts(const std::vector<TurnRecord>& turns);

}  // namespace medusa::chat
