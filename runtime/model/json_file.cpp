#include "model/json_file.h"

#include <filesystem>

#include "model/file_bytes.h"
#include "model/format_error.h"

namespace medusa {

std::optional<std::string> json_too_deep(const char* begin, const char* end, int max_depth) {
    int depth = 0;
    bool in_string = false;
    const char* string_start = nullptr;
    std::string last_string, key;  // of the top-level object
    for (const char* p = begin; p < end; ++p) {
        const char c = *p;
        if (in_string) {
            if (c == '\\') {
                ++p;  // skips the escaped character, a quote included
            } else if (c == '"') {
                in_string = false;
                if (depth == 1) last_string.assign(string_start, p);
            }
        } else if (c == '"') {
            in_string = true;
            string_start = p + 1;
        } else if (c == ':' && depth == 1) {
            key = last_string;
        } else if (c == '[' || c == '{') {
            if (++depth > max_depth) return key;
        } else if (c == ']' || c == '}') {
            --depth;  // unbalanced text is the parser's to report
        }
    }
    return std::nullopt;
}

void check_json_depth(const char* begin, const char* end, const std::string& name, int max_depth) {
    if (json_too_deep(begin, end, max_depth))
        throw FormatError(name + ": JSON nested deeper than " + std::to_string(max_depth) + " levels");
}

nlohmann::json parse_json_text(const char* begin, const char* end, const std::string& name) {
    check_json_depth(begin, end, name);
    try {
        return nlohmann::json::parse(begin, end);
    } catch (const nlohmann::json::exception& e) {
        throw FormatError(name + ": malformed JSON: " + e.what());
    }
}

nlohmann::json parse_json_text(const std::string& text, const std::string& name) {
    return parse_json_text(text.data(), text.data() + text.size(), name);
}

nlohmann::json read_json_file(const std::string& path) {
    const auto bytes = read_file_bytes(path, kMaxTextFileBytes);
    const char* p = reinterpret_cast<const char*>(bytes->data());
    return parse_json_text(p, p + bytes->size(), path);
}

std::string json_text(const nlohmann::json& value, int indent) {
    return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace) + (indent >= 0 ? "\n" : "");
}

std::string json_excerpt(const nlohmann::json& value, size_t max_chars) {
    // Depth is bounded by parse_json_text, so dump() cannot recurse far; replace: invalid UTF-8
    // in a string must not throw from inside an error message.
    std::string s = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (s.size() > max_chars) s = s.substr(0, max_chars) + "...";
    return s;
}

nlohmann::json read_cache_object(const std::string& path, const std::string& what) {
    std::error_code ec;
    if (path.empty() || !std::filesystem::exists(path, ec)) return nlohmann::json::object();
    nlohmann::json j = read_json_file(path);
    if (!j.is_object()) throw FormatError(path + ": " + what + " must be a JSON object");
    return j;
}

}  // namespace medusa
