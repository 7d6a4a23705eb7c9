// Teaching mode's walk through one step: what the drafter proposed, the tree as one block with its
// attention mask, the forward pass, the acceptance rule's verdicts, what the cache keeps. WholeStep
// is the step at once (not a phase of the walk).
#pragma once

namespace medusa::chat {

enum class TeachingPhase { WholeStep, Draft, Tree, Forward, Acceptance, Commit };
constexpr int kPhases = 5;  // Draft .. Commit
TeachingPhase next_phase(TeachingPhase p);  // Draft after Commit and after WholeStep
const char* phase_name(TeachingPhase phase);

}  // namespace medusa::chat
