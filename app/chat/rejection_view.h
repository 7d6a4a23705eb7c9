// At a sampled step whose drafts were all rejected at a node: the target's p, the drafter's q and
// the residual norm(max(0, p - q)) the model's own token was then drawn from, as bars over the
// tokens that weigh most (lossless speculative sampling, drawn).
#pragma once
#include "step_log.h"

namespace medusa::chat {

void draw_rejection_view(const StepRecord& r);

}  // namespace medusa::chat
