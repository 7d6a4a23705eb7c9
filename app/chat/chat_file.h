// Conversations kept on disk, one JSON file each, so that a chat can be reopened and continued:
// its model, and each turn's message, reply and figures (the steps' trees are not kept). Saved
// after every finished turn in `chats_dir()`; files from elsewhere are read as untrusted.
#pragma once
#include <string>
#include <vector>

namespace medusa::chat {

struct SavedTurn {
    std::string prompt, reply, mode;
    bool chat = false;
    int new_tokens = 0, steps = 0;
    double decode_ms = 0;
};

struct SavedChat {
    std::string model_path;
    std::vector<SavedTurn> turns;
    std::string title() const;  // the first message's start, on one line
};

// ${MEDUSA_CHATS}, else ${XDG_DATA_HOME:-~/.local/share}/medusa-vk/chats ("" without a home).
std::string chats_dir();
// A new file's path in `dir`, named by the time (never an existing file's).
std::string new_chat_path(const std::string& dir);

void save_chat(const std::string& path, const SavedChat& chat);  // atomically
// Throws FormatError naming `name` (the file) and what is wrong.
SavedChat parse_chat(const std::string& text, const std::string& name);
SavedChat load_chat(const std::string& path);

struct ChatEntry {
    std::string path, title;
    int turns = 0;
};
// The chats in `dir`, most recently saved first; files that do not read as chats are left out
// (`skipped` counts them).
std::vector<ChatEntry> list_chats(const std::string& dir, int* skipped = nullptr);

}  // namespace medusa::chat
