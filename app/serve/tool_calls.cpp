#include "tool_calls.h"

#include <cstring>
#include <nlohmann/json.hpp>

namespace medusa::serve {

namespace {

constexpr const char* kOpen = "<tool_call>";
constexpr const char* kClose = "</tool_call>";

std::string trimmed(const std::string& s) {
    const char* ws = " \t\r\n";
    const size_t b = s.find_first_not_of(ws);
    return b == std::string::npos ? "" : s.substr(b, s.find_last_not_of(ws) - b + 1);
}

}  // namespace

ReplyToolCalls parse_tool_calls(const std::string& reply, const std::string& id_prefix) {
    ReplyToolCalls out;
    std::string content;
    size_t at = 0;
    while (at < reply.size()) {
        const size_t open = reply.find(kOpen, at);
        const size_t close = open == std::string::npos ? open : reply.find(kClose, open);
        if (close == std::string::npos) break;
        content += reply.substr(at, open - at);
        const size_t inner = open + std::strlen(kOpen);
        const size_t end = close + std::strlen(kClose);
        const nlohmann::json call = nlohmann::json::parse(reply.substr(inner, close - inner), nullptr, false);
        const auto name = call.is_object() ? call.find("name") : call.end();
        const auto args = call.is_object() ? call.find("arguments") : call.end();
        const bool args_ok = !call.is_object() || args == call.end() || args->is_object() || args->is_string();
        if (call.is_discarded() || !call.is_object() || name == call.end() || !name->is_string() || !args_ok) {
            content += reply.substr(open, end - open);  // not a call this server can hand over
        } else {
            ToolCall c;
            c.id = id_prefix + "_" + std::to_string(out.calls.size());
            c.name = name->get<std::string>();
            c.arguments = args == call.end() ? "{}" : args->is_string() ? args->get<std::string>()
                                                     : args->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
            out.calls.push_back(std::move(c));
        }
        at = end;
    }
    if (at < reply.size()) content += reply.substr(at);
    out.content = trimmed(content);
    return out;
}

}  // namespace medusa::serve
