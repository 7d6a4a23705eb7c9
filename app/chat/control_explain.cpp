#include "control_explain.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "decode/decoding_kinds.h"

namespace medusa::chat {

namespace {

// `v` to `sig` significant digits, whole numbers kept whole ("48", "4.8", "0.61").
std::string digits(double v, int sig) {
    char buf[32];
    if (!(v > 0) || !std::isfinite(v)) return "0";
    const int magnitude = int(std::floor(std::log10(v)));  // 0 for 1..9.99, -1 for 0.1..0.99
    const int decimals = std::clamp(sig - 1 - magnitude, 0, 6);
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

// Two numbers compared in one sentence: two significant digits, more when those read the same
// ("4.1 against 4.1" says nothing).
std::pair<std::string, std::string> compared(double a, double b) {
    for (int sig = 2;; ++sig) {
        std::pair<std::string, std::string> p{digits(a, sig), digits(b, sig)};
        if (p.first != p.second || a == b || sig == 4) return p;
    }
}

std::string plural(int n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

// The drafted option with the most expected tokens per ms (the best that did not beat plain).
const ShapeOption* best_draft(const ControlTrace& c) {
    const ShapeOption* best = nullptr;
    for (size_t i = 1; i < c.weighed.size(); ++i)
        if (!best || c.weighed[i].tokens_per_ms() > best->tokens_per_ms()) best = &c.weighed[i];
    return best;
}

}  // namespace

const char* drafter_phrase(DrafterKind kind) {
    switch (kind) {
        case DrafterKind::Plain: return "plain decoding";
        case DrafterKind::Medusa: return "Medusa";
        case DrafterKind::DraftModel: return "the draft model";
        case DrafterKind::Ngram: return "n-gram lookup";
        case DrafterKind::Eagle: return "EAGLE";
        case DrafterKind::Auto: return "auto";
    }
    return "";
}

std::string two_digits(double v) { return digits(v, 2); }

std::string tokens_text(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", std::isfinite(v) ? v : 0.0);
    return buf;
}

std::vector<ShapeRow> shape_rows(const ControlTrace& c) {
    std::vector<ShapeRow> rows;
    for (size_t i = 0; i < c.weighed.size(); ++i) {
        const ShapeOption& o = c.weighed[i];
        char tokens[32];
        std::snprintf(tokens, sizeof tokens, "%.2f", o.expected_tokens);
        rows.push_back({drafter_word(o.drafter), std::to_string(o.nodes), tokens, two_digits(o.expected_ms),
                        two_digits(o.tokens_per_ms()), int(i) == c.chosen});
    }
    return rows;
}

std::string control_sentence(const ControlTrace& c) {
    if (c.weighed.empty() || c.chosen < 0 || c.chosen >= int(c.weighed.size())) return "";
    const ShapeOption& plain = c.weighed[0];
    const ShapeOption& chosen = c.choice();
    switch (c.reason) {
        case ControlReason::Pays: {
            const auto [mine, plains] = compared(chosen.tokens_per_ms(), plain.tokens_per_ms());
            return std::string("The controller chose ") + drafter_phrase(chosen.drafter) + ", " +
                   plural(chosen.nodes, "node", "nodes") + ": " + tokens_text(chosen.expected_tokens) +
                   " tokens expected in " + two_digits(chosen.expected_ms) + " ms (" + mine +
                   " tokens/ms, plain decoding " + plains + ").";
        }
        case ControlReason::NothingPays: {
            const ShapeOption* best = best_draft(c);
            if (!best) break;
            const auto [theirs, plains] = compared(best->tokens_per_ms(), plain.tokens_per_ms());
            return std::string("No draft was expected to pay: the best, ") + drafter_phrase(best->drafter) + " with " +
                   plural(best->nodes, "node", "nodes") + ", " + theirs + " tokens/ms, against plain decoding's " +
                   plains + ".";
        }
        case ControlReason::DraftedAnyway: {
            const auto [mine, plains] = compared(chosen.tokens_per_ms(), plain.tokens_per_ms());
            return std::string("The controller would have decoded plainly (plain decoding ") + plains +
                   " tokens/ms, the best draft, " + drafter_phrase(chosen.drafter) + " with " +
                   plural(chosen.nodes, "node", "nodes") + ", " + mine + "); it drafted that anyway, to show " +
                   drafter_phrase(chosen.drafter) + "'s work.";
        }
        case ControlReason::Explore:
            return std::string("Re-measuring ") + drafter_phrase(chosen.drafter) +
                   ", idle for a while: one level drafted to see whether it pays now.";
        case ControlReason::NothingDrafted: break;
    }
    return "Nothing to draft from (no earlier match, no hidden state yet, or no room): plain decoding.";
}

}  // namespace medusa::chat
