#include "chat_file.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ctime>
#include <filesystem>

#include "model/atomic_file.h"
#include "model/file_bytes.h"
#include "model/json_file.h"
#include "model/model_file.h"

namespace medusa::chat {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr size_t kMaxChatBytes = 16u << 20;  // a long conversation is a few hundred KiB
constexpr size_t kMaxTurns = 100000;
constexpr int kFormat = 1;

std::string text_field(const json& o, const char* key, const std::string& name, const std::string& where) {
    const auto it = o.find(key);
    if (it == o.end() || !it->is_string())
        throw FormatError(name + ": " + where + " needs \"" + key + "\" as a string");
    return it->get<std::string>();
}

double number_field(const json& o, const char* key, const std::string& name, const std::string& where, double max) {
    const auto it = o.find(key);
    if (it == o.end() || !it->is_number() || !(it->get<double>() >= 0) || it->get<double>() > max)
        throw FormatError(name + ": " + where + " needs \"" + key + "\" as a number from 0 to " +
                          std::to_string(int64_t(max)));
    return it->get<double>();
}

}  // namespace

std::string SavedChat::title() const {
    if (turns.empty() && name.empty()) return "(empty chat)";
    std::string t = (name.empty() ? turns.front().prompt : name).substr(0, 200);
    std::replace(t.begin(), t.end(), '\n', ' ');
    t.erase(0, t.find_first_not_of(' '));
    if (t.size() > 48) {
        size_t cut = 48;
        while (cut > 0 && (static_cast<unsigned char>(t[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
        t = t.substr(0, cut) + "...";
    }
    return t.empty() ? "(empty message)" : t;
}

std::string chats_dir() {
    if (const char* c = std::getenv("MEDUSA_CHATS"); c && *c) return c;
    if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x) return std::string(x) + "/medusa-vk/chats";
    if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.local/share/medusa-vk/chats";
    return "";
}

std::string new_chat_path(const std::string& dir) {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    for (int n = 0;; ++n) {
        const fs::path p = fs::path(dir) / (std::string("chat-") + stamp + (n ? "-" + std::to_string(n) : "") + ".json");
        std::error_code ec;
        if (!fs::exists(p, ec)) return p.string();
    }
}

void save_chat(const std::string& path, const SavedChat& chat) {
    json turns = json::array();
    for (const SavedTurn& t : chat.turns) {
        json turn = {{"prompt", t.prompt}, {"reply", t.reply}, {"mode", t.mode}, {"chat", t.chat},
                     {"new_tokens", t.new_tokens}, {"steps", t.steps}, {"decode_ms", t.decode_ms}};
        if (!t.other_replies.empty()) turn["other_replies"] = t.other_replies;
        if (t.left_out) turn["left_out"] = true;
        turns.push_back(std::move(turn));
    }
    json j = {{"medusa_chat", kFormat}, {"model", chat.model_path}, {"turns", turns}};
    if (!chat.name.empty()) j["name"] = chat.name;
    fs::create_directories(fs::path(path).parent_path());
    write_file_atomically(path, json_text(j));
}

SavedChat parse_chat(const std::string& text, const std::string& name) {
    if (text.size() > kMaxChatBytes)
        throw FormatError(name + ": " + std::to_string(text.size()) + " bytes, more than a saved chat holds (" +
                          std::to_string(kMaxChatBytes) + ")");
    const json j = parse_json_text(text, name);
    if (!j.is_object() || !j.contains("medusa_chat")) throw FormatError(name + ": not a saved chat (no \"medusa_chat\")");
    if (!j["medusa_chat"].is_number_integer() || j["medusa_chat"].get<int64_t>() != kFormat)
        throw FormatError(name + ": saved chat format " + json_excerpt(j["medusa_chat"]) + ", this program reads " +
                          std::to_string(kFormat));
    SavedChat c;
    c.model_path = text_field(j, "model", name, "the chat");
    if (j.contains("name")) c.name = text_field(j, "name", name, "the chat");
    const auto turns = j.find("turns");
    if (turns == j.end() || !turns->is_array()) throw FormatError(name + ": the chat needs \"turns\" as a list");
    if (turns->size() > kMaxTurns) throw FormatError(name + ": more than " + std::to_string(kMaxTurns) + " turns");
    for (size_t i = 0; i < turns->size(); ++i) {
        const json& t = (*turns)[i];
        const std::string where = "turn " + std::to_string(i + 1);
        if (!t.is_object()) throw FormatError(name + ": " + where + " is not an object");
        SavedTurn s;
        s.prompt = text_field(t, "prompt", name, where);
        s.reply = text_field(t, "reply", name, where);
        s.mode = text_field(t, "mode", name, where);
        const auto chat = t.find("chat");
        if (chat == t.end() || !chat->is_boolean()) throw FormatError(name + ": " + where + " needs \"chat\" as true or false");
        s.chat = chat->get<bool>();
        s.new_tokens = int(number_field(t, "new_tokens", name, where, 1e9));
        s.steps = int(number_field(t, "steps", name, where, 1e9));
        s.decode_ms = number_field(t, "decode_ms", name, where, 1e12);
        if (const auto others = t.find("other_replies"); others != t.end()) {
            if (!others->is_array() || others->size() > kMaxTurns)
                throw FormatError(name + ": " + where + " needs \"other_replies\" as a list of texts");
            for (const json& r : *others) {
                if (!r.is_string()) throw FormatError(name + ": " + where + " needs \"other_replies\" as a list of texts");
                s.other_replies.push_back(r.get<std::string>());
            }
        }
        if (const auto left = t.find("left_out"); left != t.end()) {
            if (!left->is_boolean()) throw FormatError(name + ": " + where + " needs \"left_out\" as true or false");
            s.left_out = left->get<bool>();
        }
        c.turns.push_back(std::move(s));
    }
    return c;
}

SavedChat load_chat(const std::string& path) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) throw FormatError(path + ": not a file");
    return parse_chat(read_text_file(path, kMaxChatBytes), path);
}

std::vector<ChatEntry> list_chats(const std::string& dir, int* skipped) {
    if (skipped) *skipped = 0;
    std::vector<std::pair<fs::file_time_type, ChatEntry>> found;
    std::error_code ec;
    if (dir.empty() || !fs::is_directory(dir, ec)) return {};
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        if (e.path().extension() != ".json" || !e.is_regular_file(ec)) continue;
        try {
            const SavedChat c = load_chat(e.path().string());
            ChatEntry entry{e.path().string(), c.title(), int(c.turns.size()),
                            fs::path(c.model_path).filename().string()};
            struct stat st {};
            if (::stat(entry.path.c_str(), &st) == 0) entry.saved = st.st_mtime;
            entry.searched = entry.title + "\n" + entry.model;
            for (const SavedTurn& t : c.turns) {
                if (entry.searched.size() >= kSearchedBytes) break;
                entry.searched += "\n" + t.prompt + "\n" + t.reply;
            }
            entry.searched.resize(std::min(entry.searched.size(), kSearchedBytes));
            found.push_back({e.last_write_time(ec), std::move(entry)});
        } catch (const std::exception&) {
            if (skipped) ++*skipped;
        }
    }
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : a.second.path > b.second.path;
    });
    std::vector<ChatEntry> out;
    for (auto& [when, entry] : found) out.push_back(std::move(entry));
    return out;
}

}  // namespace medusa::chat

namespace medusa::chat {

bool chat_matches(const ChatEntry& e, const std::string& query) {
    if (query.empty()) return true;
    auto lower = [](unsigned char c) { return char(std::tolower(c)); };
    const auto hit = std::search(e.searched.begin(), e.searched.end(), query.begin(), query.end(),
                                 [&](char a, char b) { return lower(a) == lower(b); });
    return hit != e.searched.end();
}

std::string saved_date(std::time_t t) {
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
    return buf;
}

void rename_chat(const std::string& path, const std::string& name) {
    SavedChat c = load_chat(path);
    c.name = name;
    std::error_code ec;
    const auto when = fs::last_write_time(path, ec);
    save_chat(path, c);
    if (!ec) fs::last_write_time(path, when, ec);  // a new name is no new message: the list keeps its order
}

void delete_chat(const std::string& path) {
    load_chat(path);  // only a saved chat is removed
    std::error_code ec;
    if (!fs::remove(path, ec)) throw std::runtime_error(path + ": not removed" + (ec ? ": " + ec.message() : ""));
}

}  // namespace medusa::chat
