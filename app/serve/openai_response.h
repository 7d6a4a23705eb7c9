// The JSON a request gets back, as OpenAI's API shapes it: a completion or chat completion with
// `usage`, its stream of server-sent events, an error object, the model list. Every reply also
// carries `speculative`: how this request was decoded (the drafter, steps, tokens per step,
// drafted and accepted tokens, tokens/s), which OpenAI's clients pass through untouched.
#pragma once
#include <cstdint>
#include <string>

#include "api_error.h"
#include "decode/speculative_decoder.h"
#include "openai_request.h"

namespace medusa::serve {

// What every chunk of one reply repeats.
struct ReplyHeader {
    std::string id;  // "cmpl-N" or "chatcmpl-N"
    int64_t created = 0;  // Unix seconds
    std::string model;
    Endpoint endpoint = Endpoint::Completions;
    bool include_usage = false;  // a stream's usage in a last chunk of its own, with no choices
};

// "stop": a stop token or string ended the reply; "length": max_tokens or the context did.
enum class FinishReason { Stop, Length };
const char* finish_reason_name(FinishReason r);

struct ReplyStats {
    GenerationStats generation;
    std::string drafter;  // what was loaded: "n-gram lookup (8 tokens ...)"
    std::string accept;   // the acceptance rule: "greedy", "typical", "sample"
};

std::string error_body(const ApiError& e);
std::string reply_body(const ReplyHeader& h, const std::string& text, FinishReason finish, const ReplyStats& stats);

// A stream's events, each "data: {...}\n\n": the opening (a chat's assistant role; nothing for a
// completion), one per piece of text, and the closing chunk (finish reason, speculative), then
// where the request asked for it (stream_options.include_usage) a chunk of usage with no
// choices, as OpenAI sends it, and "data: [DONE]". An error ends a stream as OpenAI's do: one event holding the error.
std::string opening_event(const ReplyHeader& h);
std::string text_event(const ReplyHeader& h, const std::string& text);
std::string closing_events(const ReplyHeader& h, FinishReason finish, const ReplyStats& stats);
std::string error_event(const ApiError& e);

// GET /v1/models: the one model served.
std::string models_body(const std::string& model, int64_t created);
// GET /v1/models/{id}: the one model object (what the clients' models.retrieve reads).
std::string model_body(const std::string& model, int64_t created);

}  // namespace medusa::serve
