// The JSON a request gets back, as OpenAI's API shapes it: a completion or chat completion with
// `usage`, its stream of server-sent events, an error object, the model list. Every reply also
// carries `speculative`: how this request was decoded (the drafter, steps, tokens per step,
// drafted and accepted tokens, tokens/s), which OpenAI's clients pass through untouched.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "api_error.h"
#include "decode/speculative_decoder.h"
#include "openai_request.h"

namespace medusa::serve {

// What every chunk of one reply repeats, and what the request asked of every choice.
struct ReplyHeader {
    std::string id;  // "cmpl-N" or "chatcmpl-N"
    int64_t created = 0;  // Unix seconds
    std::string model;
    Endpoint endpoint = Endpoint::Completions;
    bool include_usage = false;  // a stream's usage in a last chunk of its own, with no choices
    int choices = 1;             // n
    bool logprobs = false;       // each choice carries its tokens' log-probabilities
    std::string echo;            // a completion's prompt, which each choice's text starts with (echo)
    bool tools = false;          // tools were offered: a reply's <tool_call> blocks are its tool_calls
};

// "stop": a stop token or string ended the reply; "length": max_tokens or the context did;
// "tool_calls": it ended having called tools.
enum class FinishReason { Stop, Length, ToolCalls };
const char* finish_reason_name(FinishReason r);

struct ReplyStats {
    GenerationStats generation;
    std::string drafter;  // what was loaded: "n-gram lookup (8 tokens ...)"
    std::string accept;   // the acceptance rule: "greedy", "typical", "sample"
};

// A token of a reply with the target's log-probability of it and of the likeliest tokens there,
// each as the text the tokenizer gives it (bytes that may be part of a UTF-8 character).
struct TokenLogprobText {
    std::string text;
    float logprob = 0;
    std::vector<std::pair<std::string, float>> top;
};

struct ReplyChoice {
    std::string text;  // after the echoed prompt; with tool calls, the text outside them
    FinishReason finish = FinishReason::Length;
    std::vector<TokenLogprobText> tokens;  // when logprobs were asked for
    std::vector<ToolCall> tool_calls;
};

// A choice's reply as the client gets it: with tools offered, its <tool_call> blocks taken out as
// tool calls (ids "call_ID_CHOICE_N"), and the finish "tool_calls" when it made any.
void take_tool_calls(const ReplyHeader& h, int choice, ReplyChoice& c);

std::string error_body(const ApiError& e);
// `stats`: of every choice (their tokens, steps and times summed).
std::string reply_body(const ReplyHeader& h, const std::vector<ReplyChoice>& choices, const ReplyStats& stats);

// A stream's events, each "data: {...}\n\n": the opening (a chat's assistant role, a completion's
// echoed prompt, for each choice; nothing otherwise), one per piece of text (with its tokens'
// log-probabilities; `offset`: where the piece starts in the choice's text, echo included), a
// finish chunk as each choice but the last ends, and the closing chunk (the last choice's
// finish, speculative), then where the request asked for it (stream_options.include_usage) a
// chunk of usage with no choices, as OpenAI sends it, and "data: [DONE]". An error ends a stream
// as OpenAI's do: one event holding the error.
std::string opening_event(const ReplyHeader& h);
std::string text_event(const ReplyHeader& h, int choice, const std::string& text,
                       const std::vector<TokenLogprobText>& tokens, size_t offset);
std::string finish_event(const ReplyHeader& h, int choice, FinishReason finish);
// A streamed choice whose text was held back (tools were offered), given whole: its content and
// its tool calls, as deltas.
std::string held_reply_events(const ReplyHeader& h, int choice, const ReplyChoice& c);
std::string closing_events(const ReplyHeader& h, int choice, FinishReason finish, const ReplyStats& stats);
std::string error_event(const ApiError& e);

// GET /v1/models: the one model served.
std::string models_body(const std::string& model, int64_t created);
// GET /v1/models/{id}: the one model object (what the clients' models.retrieve reads).
std::string model_body(const std::string& model, int64_t created);

}  // namespace medusa::serve
