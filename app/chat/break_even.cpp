#include "break_even.h"

#include <cmath>
#include <cstdio>

#include "control_explain.h"

namespace medusa::chat {

std::optional<BreakEven> break_even(const StepTrace& step) {
    if (!step.control || step.control->weighed.empty()) return std::nullopt;
    const ControlTrace& c = *step.control;
    if (c.chosen < 0 || c.chosen >= int(c.weighed.size())) return std::nullopt;
    const ShapeOption& plain = c.weighed[0];
    const ShapeOption& chosen = c.choice();
    if (plain.expected_ms <= 0 || chosen.expected_ms <= 0) return std::nullopt;
    // Plain decoding emits one token per plain.expected_ms.
    return BreakEven{chosen.expected_ms / plain.expected_ms, chosen.expected_tokens, int(step.emitted.size()),
                     plain.expected_ms};
}

namespace {

bool was_drafted_anyway(const StepTrace& step) {
    return step.control && step.control->reason == ControlReason::DraftedAnyway;
}

}  // namespace

std::string drafted_anyway_outcome(const StepTrace& step) {
    const auto b = break_even(step);
    if (!b || !was_drafted_anyway(step)) return "";
    char plains[32];
    std::snprintf(plains, sizeof plains, "%.1f", b->tokens);
    const double saved = b->saved_ms();
    return "It gave " + std::to_string(b->got) + (b->got == 1 ? " token" : " tokens") +
           " in the time plain decoding takes for " + plains + ": about " + two_digits(std::fabs(saved)) + " ms " +
           (saved >= 0 ? "saved" : "lost") + " against plain decoding (by the controller's costs).";
}

DraftedAnyway drafted_anyway(const std::vector<const StepTrace*>& steps) {
    DraftedAnyway d;
    for (const StepTrace* t : steps)
        if (const auto b = break_even(*t); b && was_drafted_anyway(*t)) ++d.steps, d.saved_ms += b->saved_ms();
    return d;
}

TurnSpeedup turn_speedup(const std::vector<const StepTrace*>& steps) {
    TurnSpeedup s;
    double expected_tokens = 0, expected_ms = 0, plain_ms = 0;
    for (const StepTrace* t : steps) {
        if (!break_even(*t)) continue;
        const ControlTrace& c = *t->control;
        ++s.steps;
        expected_tokens += c.choice().expected_tokens;
        expected_ms += c.choice().expected_ms;
        plain_ms += c.weighed[0].expected_ms;
    }
    if (s.steps == 0 || expected_ms <= 0 || plain_ms <= 0) return {};
    const double plain_rate = s.steps / plain_ms;  // tokens per ms, one per plain step
    s.predicted = expected_tokens / expected_ms / plain_rate;
    return s;
}

}  // namespace medusa::chat
