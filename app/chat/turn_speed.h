// One speed per turn, the same wherever it is shown (the metrics' line, the table of turns, the
// screenshot's JSON): the turn's new tokens over its decoding time, from its first step to its
// last. Left out: the prompt's prefill with the first-use setup (recording the verify blocks),
// reported apart, and teaching mode's pauses. On a CPU driver the window's drawing shares the
// processor with decoding, so a turn decodes slower than "measure speedup" (which draws nothing
// meanwhile); the timeline's speed-up is that measurement's, beside the controller's prediction.
#pragma once
#include <optional>
#include <vector>

#include "decode_worker.h"
#include "step_log.h"

namespace medusa::chat {

struct TurnSpeed {
    int tokens = 0;
    double decode_ms = 0;   // 0: no step yet
    double prefill_ms = 0;  // the prompt and first-use setup, once the first step has run
    bool done = false;
    double tokens_per_s() const { return decode_ms > 0 ? tokens * 1000.0 / decode_ms : 0.0; }
};
// A finished turn's figures as the decoder counted them; a turn in progress's from its steps.
TurnSpeed turn_speed(const TurnRecord& turn, const std::vector<StepRecord>& steps);

// The timeline's account of a turn: what the step controller predicted its shapes would gain
// over plain decoding, and what "measure speedup" measured for this turn (nullopt: not measured).
struct TimelineSpeedup {
    int shaped_steps = 0;
    double predicted = 0;
    std::optional<double> measured;
};
TimelineSpeedup timeline_speedup(const TurnRecord& turn, const std::vector<StepRecord>& steps,
                                 const SpeedupResult& measurement);

}  // namespace medusa::chat
