// Plain-language reading of a step, for the chat colours and the teaching-mode caption.
#pragma once
#include <string>

#include "step_log.h"

namespace medusa::chat {

// Where emitted token i of a step came from: 0 = the model's own (first token or bonus),
// k >= 1 = guessed by Medusa head k and accepted by the model.
int token_origin(const StepTrace& step, int i);

// One line such as "head 1 guessed 'upon' (rank 1); the model agreed; accepted 3 tokens this step".
std::string step_caption(const StepRecord& r);

}  // namespace medusa::chat
