// What a request gets instead of a reply: an HTTP status and OpenAI's error object
// ({"error": {"message", "type", "param", "code"}}), which OpenAI's clients raise as typed errors.
#pragma once
#include <stdexcept>
#include <string>

namespace medusa::serve {

struct ApiError : std::runtime_error {
    int status;
    std::string type;   // "invalid_request_error", "authentication_error", "not_found_error", "server_error"
    std::string code;   // for programs: "invalid_json", "context_length_exceeded", "server_busy", ...
    std::string param;  // the request field at fault, or empty
    ApiError(int status, std::string type, std::string code, const std::string& message, std::string param = "")
        : std::runtime_error(message), status(status), type(std::move(type)), code(std::move(code)), param(std::move(param)) {}
};

// 400: the request itself is at fault (`param` names its field).
inline ApiError invalid_request(const std::string& code, const std::string& message, const std::string& param = "") {
    return ApiError(400, "invalid_request_error", code, message, param);
}

}  // namespace medusa::serve
