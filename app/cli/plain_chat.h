// A conversation for a model without a chat template, served when `medusa serve --chat-template
// none` asks for it: the system prompt and a blank line, then one "User: ..." and one
// "Assistant: ..." line a turn, ending in "Assistant:" for the reply, which stops where it starts
// a "User:" line of its own. What a base model continues most naturally; no model was trained on it.
#pragma once
#include <string>
#include <vector>

#include "model/chat_template.h"

namespace medusa::cli {

std::string plain_chat_text(const Conversation& conv);
// The text that ends a plain-chat reply.
std::vector<std::string> plain_chat_stop_strings();

}  // namespace medusa::cli
