// libFuzzer target: request bodies as `medusa serve` reads them, for both endpoints. A body is
// refused with one 400 ApiError (a message, and a body that is JSON), or read into fields within
// the ranges the parser promises; a chat's messages become a conversation or a 400 naming a
// message; the text a reply would carry is cut before its stop strings, and the reply, its stream
// events and the error are JSON that parses back. Nothing else may escape.
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "openai_request.h"
#include "openai_response.h"
#include "reply_text.h"
#include "tool_calls.h"

namespace {

using namespace medusa::serve;
using medusa::fuzz::check;

bool is_json(const std::string& text) { return nlohmann::json::accept(text); }

void check_refusal(const ApiError& e) {
    check(e.status == 400 && e.type == "invalid_request_error" && *e.what() != '\0');
    check(is_json(error_body(e)) && is_json(error_event(e).substr(6)));
}

void check_fields(const ApiRequest& r, size_t body_size) {
    const SamplingFields& s = r.sampling;
    check(!s.temperature || (std::isfinite(*s.temperature) && *s.temperature >= 0 && *s.temperature <= 2));
    check(!s.top_p || (*s.top_p > 0 && *s.top_p <= 1));
    check(!s.min_p || (*s.min_p >= 0 && *s.min_p < 1));
    check(!s.top_k || *s.top_k >= 0);
    check(!s.max_tokens || *s.max_tokens >= 1);
    check(r.stop.size() <= kMaxStopStrings);
    for (const std::string& stop : r.stop) check(!stop.empty() && stop.size() <= kMaxStopBytes);
    check(text_bytes(r) <= body_size);  // JSON escapes only shorten what they spell
}

// The reply this request's text would get: cut before the first stop string, whole replies JSON.
void check_reply(const ApiRequest& r) {
    const std::string text = r.endpoint == Endpoint::Completions ? r.prompt : r.messages.back().content;
    ReplyText reply(r.stop);
    std::string shown;
    for (size_t at = 0; at < text.size(); at += 3) shown += reply.feed(text.substr(at, 3));  // pieces cut anywhere
    shown += reply.finish();
    check(reply.stopped() || shown == text);
    for (const std::string& stop : r.stop) check(shown.find(stop) == std::string::npos);
    const ReplyHeader h{"id", 0, "m", r.endpoint};
    const ReplyStats stats;
    check(is_json(reply_body(h, {{shown, FinishReason::Stop, {{shown, -1.0f, {{shown, -1.0f}}}}}}, stats)));
    check(is_json(text_event(h, 0, shown, {{shown, -1.0f, {}}}, 0).substr(6)));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view body(reinterpret_cast<const char*>(data), size);
    for (const Endpoint endpoint : {Endpoint::Completions, Endpoint::ChatCompletions}) {
        try {
            const ApiRequest r = parse_request(body, endpoint);
            check(r.endpoint == endpoint);
            check_fields(r, size);
            if (endpoint == Endpoint::ChatCompletions) {
                check(!r.messages.empty());
                // Every order of roles renders in every format (tools, alternation, prefills).
                for (const medusa::ChatTemplate t : {medusa::ChatTemplate::ChatML, medusa::ChatTemplate::Qwen3,
                                                     medusa::ChatTemplate::Llama3, medusa::ChatTemplate::Gemma,
                                                     medusa::ChatTemplate::Llama2Chat, medusa::ChatTemplate::VicunaV11})
                    check(!medusa::render_messages(t, r.messages, true, r.tools).parts.empty());
                // A reply's tool calls: whatever the text, the content left is no longer than it.
                const std::string& last = r.messages.back().content;
                check(parse_tool_calls(last, "call").content.size() <= last.size());
            }
            check_reply(r);
        } catch (const ApiError& e) {
            check_refusal(e);
        }
    }
    return 0;
}
