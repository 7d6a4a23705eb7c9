// Whether a step paid: a drafted step costs its drafting and a verify pass of its whole tree, so it
// must emit more tokens than one plain step to beat plain decoding. From the step controller's
// account (the costs it measured on this device): the tokens at which the step breaks even, what
// it expected, and what it got; over a turn, the speed-up it predicted against the one it had.
#pragma once
#include <optional>
#include <vector>

#include "decode/step_trace.h"

namespace medusa::chat {

struct BreakEven {
    double tokens = 1.0;    // the chosen shape's cost in plain steps: emitting more than this paid
    double expected = 1.0;  // the tokens the controller expected of the shape
    int got = 0;            // the tokens the step emitted
    bool paid() const { return got > tokens; }
};
// Only for steps the controller shaped (their trace has its costs).
std::optional<BreakEven> break_even(const StepTrace& step);

struct TurnSpeedup {
    int steps = 0;            // controlled steps counted
    double predicted = 0.0;   // expected tokens per expected ms, against plain decoding's rate
    double measured = 0.0;    // emitted tokens per wall ms, against the same plain rate
};
// Over the steps the controller shaped; `steps` 0 when there were none.
TurnSpeedup turn_speedup(const std::vector<const StepTrace*>& steps);

}  // namespace medusa::chat
