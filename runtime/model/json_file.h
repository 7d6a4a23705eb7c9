// JSON from untrusted files: bounded size, bounded nesting, one-line errors naming the file.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace medusa {

// Every JSON file the program reads is shallow; a deeper one is hostile (dump() and the
// recursive walks over it would overflow the stack).
constexpr int kMaxJsonDepth = 512;

// Where text nests deeper than `max_depth`, without parsing anything: the key of the top-level
// object whose value does (the text between its quotes, escapes and all; empty outside one), or
// nullopt when nothing does.
std::optional<std::string> json_too_deep(const char* begin, const char* end, int max_depth);
// Throws FormatError "NAME: JSON nested deeper than 512 levels" without parsing anything.
void check_json_depth(const char* begin, const char* end, const std::string& name, int max_depth = kMaxJsonDepth);

// Depth-checked parse; malformed text throws FormatError "NAME: malformed JSON: ...".
nlohmann::json parse_json_text(const char* begin, const char* end, const std::string& name);
nlohmann::json parse_json_text(const std::string& text, const std::string& name);

// A regular file of at most 64 MiB, depth-checked and parsed.
nlohmann::json read_json_file(const std::string& path);
// A cache file of JSON objects keyed by device (kernel tuning, the cost model): an empty object
// when `path` is empty or missing; anything but an object throws FormatError "PATH: WHAT must be a
// JSON object".
nlohmann::json read_cache_object(const std::string& path, const std::string& what);

// The text of a JSON value to write to a file: `indent` as dump() takes it, a newline after an
// indented document. Bytes that are not UTF-8 (a path from a Latin-1 file system) become U+FFFD
// instead of throwing after the work that produced the document.
std::string json_text(const nlohmann::json& value, int indent = 2);

// A JSON value for an error message: at most `max_chars` characters of its text.
std::string json_excerpt(const nlohmann::json& value, size_t max_chars = 60);

}  // namespace medusa
