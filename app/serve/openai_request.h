// The body of an OpenAI completion or chat completion request, read and checked: every field
// this server uses, of the type and in the range OpenAI documents (unknown fields are ignored, as
// OpenAI's clients expect). What is wrong is one ApiError (400) naming the field.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api_error.h"
#include "model/chat_template.h"

namespace medusa::serve {

// The largest request body read; a larger one is refused with 413 before it is parsed.
constexpr size_t kMaxBodyBytes = size_t(1) << 20;
// OpenAI's limit on `stop`, and a bound on each (the stop filter holds back that many bytes).
constexpr size_t kMaxStopStrings = 16;  // front-ends send long lists; llama.cpp has no cap
constexpr size_t kMaxStopBytes = 256;
constexpr size_t kMaxLogitBias = 1024;  // entries of logit_bias
constexpr int kMaxChoices = 16;          // n: choices decoded one after another
constexpr size_t kMaxTools = 128;
constexpr int kMaxTopLogprobs = 20;      // chat's top_logprobs (a completion's logprobs: 5), as OpenAI's

enum class Endpoint { Completions, ChatCompletions };

// What a request may set; what it leaves out, the server's flags give.
struct SamplingFields {
    std::optional<float> temperature, top_p, min_p;
    std::optional<int> top_k;
    std::optional<int> max_tokens;  // max_completion_tokens too
    std::optional<uint64_t> seed;
    std::optional<float> frequency_penalty, presence_penalty;  // -2..2, over the recent tokens
    std::vector<std::pair<int, float>> logit_bias;              // token id, -100..100; at most kMaxLogitBias
};

struct ApiRequest {
    Endpoint endpoint = Endpoint::Completions;
    std::string prompt;                 // completions
    std::vector<ChatMessage> messages;  // chat completions: any roles in any order (render_messages)
    SamplingFields sampling;
    std::vector<std::string> stop;  // non-empty strings, at most kMaxStopStrings
    bool stream = false;
    bool include_usage = false;  // stream_options.include_usage: usage in a last chunk of its own
    // Each token's log-probability and this many likeliest alternatives (chat: logprobs: true with
    // top_logprobs; completion: logprobs: N); nullopt: none.
    std::optional<int> logprobs;
    bool echo = false;  // a completion's text starts with its prompt
    // A chat's tools, each as Python's json.dumps writes the request's object (what the templates'
    // tojson gives), offered to the model unless tool_choice is "none"; the reply's <tool_call>
    // blocks become its tool_calls.
    std::vector<std::string> tools;
    int n = 1;          // choices, each decoded with the next seed
};

// `body` as the endpoint reads it; throws ApiError (400) for malformed JSON, a body that is not an
// object, a missing prompt or messages, and a field of the wrong type or out of range.
ApiRequest parse_request(std::string_view body, Endpoint endpoint);

// `messages` with `system` first when they start with no system message of their own.
std::vector<ChatMessage> with_default_system(std::vector<ChatMessage> messages, const std::string& system);

// The bytes of text a request asks the model to read (the prompt, or every message's content):
// what is bounded before tokenizing.
size_t text_bytes(const ApiRequest& request);

}  // namespace medusa::serve
