// libFuzzer target: saved chats (app/chat/chat_file.h). Any bytes either read as a chat or are
// refused with FormatError; a chat that reads writes back to the same chat.
#include <cstdint>
#include <filesystem>
#include <string>
#include <unistd.h>

#include "chat_file.h"
#include "fuzz_support.h"
#include "model/model_file.h"

using medusa::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    medusa::chat::SavedChat chat;
    try {
        chat = medusa::chat::parse_chat(text, "fuzz.json");
    } catch (const medusa::FormatError&) {
        return 0;
    }
    (void)chat.title();
    static const std::string path =
        (std::filesystem::temp_directory_path() / ("fuzz-chat-" + std::to_string(::getpid()) + ".json")).string();
    medusa::chat::save_chat(path, chat);
    const medusa::chat::SavedChat back = medusa::chat::load_chat(path);
    check(back.model_path == chat.model_path && back.turns.size() == chat.turns.size());
    for (size_t i = 0; i < chat.turns.size(); ++i)
        check(back.turns[i].prompt == chat.turns[i].prompt && back.turns[i].reply == chat.turns[i].reply &&
              back.turns[i].new_tokens == chat.turns[i].new_tokens && back.turns[i].chat == chat.turns[i].chat);
    return 0;
}
