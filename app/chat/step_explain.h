// Plain-language reading of a step, for the chat colours and the teaching-mode caption.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "setup/drafting.h"
#include "step_log.h"
#include "teaching_phase.h"

namespace medusa::chat {

// Where emitted token i of a Medusa step came from: 0 = the model's own (first token or bonus),
// k >= 1 = guessed by Medusa head k and accepted by the model.
int token_origin(const StepTrace& step, int i);
// The same for any step: draft steps give kDraftOrigin (palette.h) for accepted drafted tokens.
int token_origin(const StepRecord& r, int i);

// The first drafted node the target rejected (a draft step), or -1 when all were accepted.
int rejected_node(const StepTrace& step);

// Who drafted the guess at `depth` of a step: "head 2" (Medusa), "EAGLE level 2", "the lookup"
// (n-gram), "the draft" (a draft model).
std::string guesser(const StepTrace& step, int depth);
// The tree panel's row label for `depth`: "head 2", "level 2", "draft 2".
std::string row_label(const StepTrace& step, int depth);
// One sentence on how the step's drafter works, for the tree panel's legend; `eagle`: what the
// loaded EAGLE layer reads (EAGLE-3 names its target layers and draft vocabulary).
std::string drafter_explanation(const StepTrace& step, const std::optional<EagleReads>& eagle = std::nullopt);

// The lines a node's tooltip shows: who drafted it, q and p, and the number that decided it
// under the step's rule (greedy: the model's own choice; typical: p against the threshold;
// sample: the draw u against r(x)/q(x)), or why it was never tested.
std::vector<std::string> node_explanation(const StepRecord& r, int node);

// The caption of a teaching phase (teaching_phase.h) of the step; WholeStep: step_caption.
std::string phase_caption(const StepRecord& r, TeachingPhase phase);

// One line such as "head 1 guessed 'upon' (rank 1); the model agreed; accepted 3 tokens this step",
// or for a draft step "the draft proposed 4 tokens ...; the target accepted 2; at position 3 it
// rejected 'x' (p/q = 0.31) and resampled 'y'".
std::string step_caption(const StepRecord& r);

}  // namespace medusa::chat
