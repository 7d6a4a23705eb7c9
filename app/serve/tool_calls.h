// The tool calls in a reply to a request that offered tools: the model writes each as a
// <tool_call>{"name": ..., "arguments": {...}}</tool_call> block (the format the tools' system
// block asks for), and OpenAI's clients read them as the message's tool_calls.
#pragma once
#include <string>
#include <vector>

#include "model/chat_template.h"

namespace medusa::serve {

struct ReplyToolCalls {
    std::string content;          // the text outside the blocks, trimmed
    std::vector<ToolCall> calls;  // ids id_prefix + "_0", "_1", ...; arguments as compact JSON text
};

// Blocks whose JSON is not an object with a string "name" stay in the content as they are, as
// does an unclosed block; "arguments" may be an object or a JSON string, or absent ({}).
ReplyToolCalls parse_tool_calls(const std::string& reply, const std::string& id_prefix);

}  // namespace medusa::serve
