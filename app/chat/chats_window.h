// The saved chats (chat_file.h), most recent first, in a window of their own: each with its date,
// model and turns; a search over titles, models and text; and, per chat, open, rename, delete
// (asked twice) and export as markdown or JSON.
#pragma once
#include <string>
#include <vector>

#include "chat_file.h"

namespace medusa::chat {

struct ChatApp;

class ChatsWindow {
public:
    // Reads the chats folder again and shows the window.
    void open();
    void draw(ChatApp& app);
    bool is_open() const { return open_; }
    // What the last frame listed (the paths, after the search) and the last action's note.
    const std::vector<std::string>& listed() const { return listed_; }
    const std::string& note() const { return note_; }
    std::string query;  // the search box's text

private:
    void row(ChatApp& app, size_t i);
    bool open_ = false, reread_ = false;
    std::vector<ChatEntry> entries_;
    int skipped_ = 0;
    std::vector<std::string> listed_;
    int renaming_ = -1, deleting_ = -1;  // the entry being renamed, or asked about deleting
    std::string new_name_, note_;
};

}  // namespace medusa::chat
