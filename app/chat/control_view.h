// The tree panel's view of the step controller at work: why the step took its shape, in one
// sentence, and the shapes it weighed, the chosen one highlighted.
#pragma once
#include "chat_app.h"

namespace medusa::chat {

// Nothing for a step the controller did not shape (--fixed-shape, or details dropped).
void draw_control_view(ChatApp& app, const StepRecord& r);

}  // namespace medusa::chat
