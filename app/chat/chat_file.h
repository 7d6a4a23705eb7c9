// Conversations kept on disk, one JSON file each, so that a chat can be reopened and continued:
// its model, and each turn's message, reply and figures (the steps' trees are not kept). Saved
// after every finished turn in `chats_dir()`; files from elsewhere are read as untrusted.
#pragma once
#include <ctime>
#include <string>
#include <vector>

namespace medusa::chat {

struct SavedTurn {
    std::string prompt, reply, mode;
    bool chat = false;
    int new_tokens = 0, steps = 0;
    double decode_ms = 0;
    std::vector<std::string> other_replies;  // replies Regenerate replaced (optional in the file)
    bool left_out = false;                   // left out of the model's context (optional)
};

struct SavedChat {
    std::string model_path;
    std::vector<SavedTurn> turns;
    std::string name;  // given in the Chats list (optional; "": none)
    std::string title() const;  // the name, else the first message's start, on one line
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
    std::string model;  // the model's file name
    std::time_t saved = 0;
    // What a search looks in: the title, the model and the start of the text (kSearchedBytes).
    std::string searched;
};
constexpr size_t kSearchedBytes = 16 << 10;
// The chats in `dir`, most recently saved first; files that do not read as chats are left out
// (`skipped` counts them).
std::vector<ChatEntry> list_chats(const std::string& dir, int* skipped = nullptr);
// Whether an entry holds `query`, letters of either case alike (an empty query: every entry).
bool chat_matches(const ChatEntry& e, const std::string& query);
// "2026-11-27 14:03" in local time.
std::string saved_date(std::time_t t);

// Gives a saved chat a name (empty: back to its first message's start); throws as load_chat does.
void rename_chat(const std::string& path, const std::string& name);
// Removes a saved chat's file; throws std::runtime_error naming it when that fails or it is no chat.
void delete_chat(const std::string& path);

}  // namespace medusa::chat
