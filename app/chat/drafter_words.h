// The app's short word for each drafter, where turns and measurements are grouped or labelled.
#pragma once
#include "decode/decoding_kinds.h"

namespace medusa::chat {

// "plain", "Medusa", "draft", "n-gram", "EAGLE"
const char* drafter_word(DrafterKind kind);

}  // namespace medusa::chat
