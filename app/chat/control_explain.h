// The step controller's choice in words, for the tree panel: the shapes a step weighed as table
// rows, and one sentence on why it took the one it did (or fell back to plain decoding). Pure
// functions of the step's ControlTrace, so the words are tested on hand-made traces.
#pragma once
#include <string>
#include <vector>

#include "decode/step_plan.h"

namespace medusa::chat {

// A drafter as a sentence names it: "plain decoding", "Medusa", "the draft model",
// "n-gram lookup", "EAGLE", "auto".
const char* drafter_phrase(DrafterKind kind);

// A number of milliseconds or tokens per millisecond to two significant digits ("0.61", "4.8",
// "48"); expected tokens to one decimal ("2.9").
std::string two_digits(double v);
std::string tokens_text(double v);

// One row of the weighed-shapes table, its cells as drawn.
struct ShapeRow {
    std::string drafter;  // drafter_word: "plain", "n-gram", ...
    std::string nodes, tokens, ms, per_ms;
    bool chosen = false;
};
std::vector<ShapeRow> shape_rows(const ControlTrace& control);

// Why the step took the shape it did:
// Pays: "The controller chose n-gram lookup, 4 nodes: 2.9 tokens expected in 0.61 ms (4.8 tokens/ms,
// plain decoding 3.1)."
// NothingPays: "No draft was expected to pay: the best, Medusa with 3 nodes, 3.6 tokens/ms, against
// plain decoding's 4.1."
// NothingDrafted: "Nothing to draft from (no earlier match, no hidden state yet, or no room): plain
// decoding."
// DraftedAnyway: "The controller would have decoded plainly (plain decoding 4.1 tokens/ms, the best
// draft, Medusa with 3 nodes, 3.6); it drafted that anyway, to show Medusa's work."
// Explore: "Re-measuring EAGLE, idle for a while: one level drafted to see whether it pays now."
// Empty for a trace that weighed nothing.
std::string control_sentence(const ControlTrace& control);

}  // namespace medusa::chat
