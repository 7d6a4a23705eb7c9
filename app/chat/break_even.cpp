#include "break_even.h"

namespace medusa::chat {

std::optional<BreakEven> break_even(const StepTrace& step) {
    if (!step.control || step.control->weighed.empty()) return std::nullopt;
    const ControlTrace& c = *step.control;
    if (c.chosen < 0 || c.chosen >= int(c.weighed.size())) return std::nullopt;
    const ShapeOption& plain = c.weighed[0];
    const ShapeOption& chosen = c.choice();
    if (plain.expected_ms <= 0 || chosen.expected_ms <= 0) return std::nullopt;
    // Plain decoding emits one token per plain.expected_ms.
    return BreakEven{chosen.expected_ms / plain.expected_ms, chosen.expected_tokens, int(step.emitted.size())};
}

TurnSpeedup turn_speedup(const std::vector<const StepTrace*>& steps) {
    TurnSpeedup s;
    double expected_tokens = 0, expected_ms = 0, plain_ms = 0, wall_ms = 0;
    long tokens = 0;
    for (const StepTrace* t : steps) {
        if (!break_even(*t)) continue;
        const ControlTrace& c = *t->control;
        ++s.steps;
        expected_tokens += c.choice().expected_tokens;
        expected_ms += c.choice().expected_ms;
        plain_ms += c.weighed[0].expected_ms;
        wall_ms += t->wall_ms;
        tokens += long(t->emitted.size());
    }
    if (s.steps == 0 || expected_ms <= 0 || plain_ms <= 0) return {};
    const double plain_rate = s.steps / plain_ms;  // tokens per ms, one per plain step
    s.predicted = expected_tokens / expected_ms / plain_rate;
    s.measured = wall_ms > 0 ? tokens / wall_ms / plain_rate : 0.0;
    return s;
}

}  // namespace medusa::chat
