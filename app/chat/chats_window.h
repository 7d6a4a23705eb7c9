// The saved chats (chat_file.h), most recent first, in a window of their own: each with its date,
// model and turns; a search over titles, models and text; and, per chat, open, rename, delete
// (asked twice) and export as markdown or JSON.
#pragma once
#include <string>
#include <vector>

#include "chat_file.h"

namespace medusa::chat {

// What the window needs of the app: the chat now open (its file, and the name given to it), and
// opening a saved one.
class ChatsHost {
public:
    virtual ~ChatsHost() = default;
    virtual const std::string& current_chat() const = 0;  // its file; "" before its first save
    virtual void name_current_chat(const std::string& name) = 0;
    // The current chat's file was deleted: the next reply saves it anew.
    virtual void forget_current_chat() = 0;
    // False, with why_not_opened() saying why, when decoding or the file does not read.
    virtual bool open_saved_chat(const std::string& path) = 0;
    virtual std::string why_not_opened() const = 0;
};

class ChatsWindow {
public:
    // Reads the chats folder again and shows the window.
    void open();
    void draw(ChatsHost& app);
    bool is_open() const { return open_; }
    // What the last frame listed (the paths, after the search) and the last action's note.
    const std::vector<std::string>& listed() const { return listed_; }
    const std::string& note() const { return note_; }
    std::string query;  // the search box's text

private:
    void row(ChatsHost& app, size_t i);
    bool open_ = false, reread_ = false;
    std::vector<ChatEntry> entries_;
    int skipped_ = 0;
    std::vector<std::string> listed_;
    int renaming_ = -1, deleting_ = -1;  // the entry being renamed, or asked about deleting
    std::string new_name_, note_;
};

}  // namespace medusa::chat
