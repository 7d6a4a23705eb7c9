#include "plain_chat.h"

namespace medusa::cli {

std::string plain_chat_text(const std::vector<ChatMessage>& messages) {
    std::string out;
    size_t i = 0;
    if (!messages.empty() && messages[0].role == ChatRole::System) {
        if (!messages[0].content.empty()) out = messages[0].content + "\n\n";
        i = 1;
    }
    for (; i < messages.size(); ++i) {
        const ChatMessage& m = messages[i];
        std::string speaker = chat_role_name(m.role);
        speaker[0] = char(speaker[0] - 'a' + 'A');
        out += speaker + ": " + with_tool_call_blocks(m);
        if (i + 1 == messages.size() && m.role == ChatRole::Assistant) return out;  // continued
        out += "\n";
    }
    return out + "Assistant:";
}

std::vector<std::string> plain_chat_stop_strings() { return {"\nUser:"}; }

}  // namespace medusa::cli
