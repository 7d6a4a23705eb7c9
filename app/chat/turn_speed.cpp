#include "turn_speed.h"

#include "break_even.h"

namespace medusa::chat {

TurnSpeed turn_speed(const TurnRecord& turn, const std::vector<StepRecord>& steps) {
    TurnSpeed s;
    s.done = turn.done;
    s.prefill_ms = turn.prefill_ms;
    if (turn.done) {
        s.tokens = turn.new_tokens, s.decode_ms = turn.decode_ms;
        return s;
    }
    for (const StepRecord& r : steps)
        if (r.turn == turn.id) s.tokens += int(r.trace.emitted.size()), s.decode_ms = r.t_ms;
    return s;
}

TimelineSpeedup timeline_speedup(const TurnRecord& turn, const std::vector<StepRecord>& steps,
                                 const SpeedupResult& measurement) {
    std::vector<const StepTrace*> traces;
    for (const StepRecord& r : steps)
        if (r.turn == turn.id) traces.push_back(&r.trace);
    const TurnSpeedup predicted = turn_speedup(traces);
    TimelineSpeedup t{predicted.steps, predicted.predicted, std::nullopt};
    if (measurement.valid && measurement.turn == turn.id) t.measured = measurement.speedup();
    return t;
}

}  // namespace medusa::chat
