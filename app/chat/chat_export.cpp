#include "chat_export.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "model/atomic_file.h"
#include "model/json_file.h"

namespace medusa::chat {

namespace fs = std::filesystem;

std::string conversation_text(const SavedChat& chat) {
    std::string out;
    for (const SavedTurn& t : chat.turns) {
        if (!out.empty()) out += "\n\n";
        out += t.chat ? "You: " + t.prompt + "\n\nAssistant: " + t.reply : t.prompt + t.reply;
    }
    return out;
}

std::string conversation_markdown(const SavedChat& chat) {
    std::string out = "# " + chat.title() + "\n\nModel: `" + fs::path(chat.model_path).filename().string() + "`\n";
    for (const SavedTurn& t : chat.turns) {
        out += "\n---\n\n";
        out += t.chat ? "**You:**\n\n" + t.prompt + "\n\n**Assistant:**\n\n" + t.reply + "\n" : t.prompt + t.reply + "\n";
    }
    return out;
}

std::string conversation_json(const SavedChat& chat) {
    nlohmann::json messages = nlohmann::json::array();
    for (const SavedTurn& t : chat.turns) {
        messages.push_back({{"role", "user"}, {"content", t.prompt}});
        messages.push_back({{"role", "assistant"}, {"content", t.reply}});
    }
    return json_text({{"title", chat.title()}, {"model", chat.model_path}, {"messages", messages}});
}

std::string export_path(const std::string& chat_path, const std::string& extension) {
    const fs::path p(chat_path);
    return (p.parent_path() / "exported" / p.stem()).string() + extension;
}

std::string export_chat(const std::string& chat_path, const std::string& extension) {
    const SavedChat c = load_chat(chat_path);
    const std::string out = export_path(chat_path, extension);
    std::error_code ec;
    fs::create_directories(fs::path(out).parent_path(), ec);
    if (ec) throw std::runtime_error(fs::path(out).parent_path().string() + ": cannot create the folder: " + ec.message());
    write_file_atomically(out, extension == ".json" ? conversation_json(c) : conversation_markdown(c));
    return out;
}

}  // namespace medusa::chat
