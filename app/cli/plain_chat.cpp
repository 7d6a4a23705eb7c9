#include "plain_chat.h"

namespace medusa::cli {

namespace {

const char* speaker(ChatRole r) {
    switch (r) {
        case ChatRole::System: return "System";
        case ChatRole::User: return "User";
        case ChatRole::Assistant: return "Assistant";
        case ChatRole::Tool: return "Tool";
    }
    return "?";
}

}  // namespace

std::string plain_chat_text(const std::vector<ChatMessage>& messages) {
    std::string out;
    size_t i = 0;
    if (!messages.empty() && messages[0].role == ChatRole::System) {
        if (!messages[0].content.empty()) out = messages[0].content + "\n\n";
        i = 1;
    }
    for (; i < messages.size(); ++i) {
        const ChatMessage& m = messages[i];
        out += std::string(speaker(m.role)) + ": " + with_tool_call_blocks(m);
        if (i + 1 == messages.size() && m.role == ChatRole::Assistant) return out;  // continued
        out += "\n";
    }
    return out + "Assistant:";
}

std::vector<std::string> plain_chat_stop_strings() { return {"\nUser:"}; }

}  // namespace medusa::cli
