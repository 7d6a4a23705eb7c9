#include "plain_chat.h"

namespace medusa::cli {

std::string plain_chat_text(const Conversation& conv) {
    std::string out = conv.system.empty() ? "" : conv.system + "\n\n";
    for (const ChatTurn& t : conv.history) out += "User: " + t.user + "\nAssistant: " + t.assistant + "\n";
    return out + "User: " + conv.user + "\nAssistant:";
}

std::vector<std::string> plain_chat_stop_strings() { return {"\nUser:"}; }

}  // namespace medusa::cli
