// Whether a step paid: a drafted step costs its drafting and a verify pass of its whole tree, so it
// must emit more tokens than one plain step to beat plain decoding. From the step controller's
// account (the costs it measured on this device): the tokens at which the step breaks even, what
// it expected, and what it got; over a turn, the speed-up it predicted.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "decode/step_trace.h"

namespace medusa::chat {

struct BreakEven {
    double tokens = 1.0;    // the chosen shape's cost in plain steps: emitting more than this paid
    double expected = 1.0;  // the tokens the controller expected of the shape
    int got = 0;            // the tokens the step emitted
    double plain_ms = 0;    // one plain step, by the controller's costs
    bool paid() const { return got > tokens; }
    // Against plain decoding of the same tokens, by the controller's costs (negative: lost).
    double saved_ms() const { return (got - tokens) * plain_ms; }
};
// Only for steps the controller shaped (their trace has its costs).
std::optional<BreakEven> break_even(const StepTrace& step);

// A step drafted where the controller would have decoded plainly (ControlReason::DraftedAnyway):
// "It gave 2 tokens in the time plain decoding takes for 1.3: about 0.21 ms saved against plain
// decoding (by the controller's costs)." Empty for any other step.
std::string drafted_anyway_outcome(const StepTrace& step);

// The steps of a turn drafted where the controller would have decoded plainly, and what they
// saved in all against plain decoding (negative: lost), by the controller's costs.
struct DraftedAnyway {
    int steps = 0;
    double saved_ms = 0;
};
DraftedAnyway drafted_anyway(const std::vector<const StepTrace*>& steps);

struct TurnSpeedup {
    int steps = 0;            // controlled steps counted
    double predicted = 0.0;   // expected tokens per expected ms, against plain decoding's rate
};
// Over the steps the controller shaped; `steps` 0 when there were none. (What the turn gained is
// measured apart, plain decoding timed alike: turn_speed.h.)
TurnSpeedup turn_speedup(const std::vector<const StepTrace*>& steps);

}  // namespace medusa::chat
