// A conversation for a model without a chat template, served when `medusa serve --chat-template
// none` asks for it: a leading system message and a blank line, then one line a message, "User: ",
// "Assistant: ", "System: " or "Tool: " and its text (an assistant's tool calls as <tool_call>
// blocks after it), ending in "Assistant:" for the reply, which stops where it starts a "User:"
// line of its own. A last assistant message is continued: the text ends with it. What a base
// model continues most naturally; no model was trained on it.
#pragma once
#include <string>
#include <vector>

#include "model/chat_template.h"

namespace medusa::cli {

std::string plain_chat_text(const std::vector<ChatMessage>& messages);
// The text that ends a plain-chat reply.
std::vector<std::string> plain_chat_stop_strings();

}  // namespace medusa::cli
