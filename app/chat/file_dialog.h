// A small file chooser drawn inside the window (ImGui has none, and Debian packages none): the
// folder's subfolders and files, a path line to type into, Up, Open and Cancel. Folders can be
// chosen too (a Hugging Face model, Medusa heads, an EAGLE layer are folders).
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace medusa::chat {

class FileDialog {
public:
    // Starts choosing a path for `*target`, in the folder of its current value.
    void open(std::string* target, const std::string& title);
    // Starts choosing a path from `start`'s folder; `choose` takes the path chosen.
    void open(const std::string& start, std::function<void(const std::string&)> choose, const std::string& title);
    // Draws the dialog while it is open; true on the frame a path was chosen into the target.
    bool draw();
    bool is_open() const { return bool(choose_); }

private:
    void list(const std::string& dir);
    std::function<void(const std::string&)> choose_;
    std::string title_, dir_, typed_, error_;
    std::string described_, description_;  // the last path described, and what it is
    std::vector<std::pair<std::string, bool>> entries_;  // name, is a folder
    bool want_popup_ = false;
};

}  // namespace medusa::chat
