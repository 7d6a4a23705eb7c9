// What `medusa serve` makes of OpenAI's API, without a server: request bodies read and refused
// field by field, conversations from messages, reply text in whole characters and cut at stop
// strings, replies and their stream events, and the queue that holds requests.
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "cors_policy.h"
#include "model/json_file.h"
#include "openai_request.h"
#include "openai_response.h"
#include "reply_text.h"
#include "request_queue.h"
#include "tool_calls.h"

using namespace medusa;
using namespace medusa::serve;
using nlohmann::json;

namespace {

// The error a body gets from the completions endpoint (status 0: none).
ApiError refusal(const std::string& body, Endpoint endpoint = Endpoint::Completions) {
    try {
        parse_request(body, endpoint);
    } catch (const ApiError& e) {
        return e;
    }
    return ApiError(0, "", "", "accepted");
}

}  // namespace

TEST_CASE("a completion request's fields are read, null as absent and unknown fields ignored", "[serve]") {
    const ApiRequest r = parse_request(
        R"({"model": "x", "prompt": "Once", "max_tokens": 7, "temperature": 0, "top_p": 0.5, "top_k": 3,
            "min_p": 0.25, "seed": 18446744073709551615, "stop": ["a", "", "bc"], "stream": true,
            "logprobs": null, "presence_penalty": 0.1, "user": {"anything": [1, 2]}})",
        Endpoint::Completions);
    CHECK(r.prompt == "Once");
    CHECK(r.sampling.max_tokens == 7);
    CHECK(r.sampling.temperature == 0.0f);
    CHECK(r.sampling.top_p == 0.5f);
    CHECK(r.sampling.top_k == 3);
    CHECK(r.sampling.min_p == 0.25f);
    CHECK(r.sampling.seed == UINT64_MAX);
    CHECK(r.stop == std::vector<std::string>{"a", "bc"});  // "" would stop before the first token
    CHECK(r.stream);
    CHECK_FALSE(r.include_usage);
    const ApiRequest shaped = parse_request(
        R"({"prompt": "x", "frequency_penalty": -0.5, "presence_penalty": 2, "logit_bias": {"50256": -100, "7": 2.5}})",
        Endpoint::Completions);
    CHECK(shaped.sampling.frequency_penalty == -0.5f);
    CHECK(shaped.sampling.presence_penalty == 2.0f);
    CHECK(shaped.sampling.logit_bias == std::vector<std::pair<int, float>>{{50256, -100.0f}, {7, 2.5f}});  // in key order
    CHECK(parse_request(R"({"prompt": "x", "stream": true, "stream_options": {"include_usage": true}})", Endpoint::Completions)
              .include_usage);
    const ApiRequest plain = parse_request(R"({"prompt": ["one"], "temperature": null, "stop": "x"})", Endpoint::Completions);
    CHECK(plain.prompt == "one");
    CHECK_FALSE(plain.sampling.temperature);
    CHECK_FALSE(plain.sampling.max_tokens);
    CHECK(plain.stop == std::vector<std::string>{"x"});
    // Sixteen stop strings, as front-ends send them (the seventeenth is refused, below).
    std::vector<std::string> sixteen;
    for (char c = 'a'; c < 'a' + 16; ++c) sixteen.push_back(std::string(3, c));
    CHECK(parse_request(nlohmann::json{{"prompt", "x"}, {"stop", sixteen}}.dump(), Endpoint::Completions).stop == sixteen);
    CHECK(parse_request(R"({"messages": [{"role": "user", "content": "hi"}], "max_completion_tokens": 3})",
                        Endpoint::ChatCompletions)
              .sampling.max_tokens == 3);
}

TEST_CASE("a request body is refused with 400 naming the field, type and range", "[serve]") {
    struct Case {
        const char* body;
        const char* code;
        const char* param;
    };
    const std::string long_stop = "\"" + std::string(kMaxStopBytes + 1, 's') + "\"";
    for (const Case& c : std::initializer_list<Case>{
             {"{\"prompt\": ", "invalid_json", ""},
             {"[1, 2]", "invalid_json", ""},
             {"", "invalid_json", ""},
             {"{\"prompt\": \"x\", \"temperature\": \"hot\"}", "invalid_type", "temperature"},
             {"{\"prompt\": \"x\", \"temperature\": 2.5}", "invalid_type", "temperature"},
             {"{\"prompt\": \"x\", \"temperature\": -0.1}", "invalid_type", "temperature"},
             {"{\"prompt\": \"x\", \"top_p\": 0}", "invalid_type", "top_p"},
             {"{\"prompt\": \"x\", \"min_p\": 1}", "invalid_type", "min_p"},
             {"{\"prompt\": \"x\", \"top_k\": 1.5}", "invalid_type", "top_k"},
             {"{\"prompt\": \"x\", \"top_k\": -1}", "invalid_type", "top_k"},
             {"{\"prompt\": \"x\", \"max_tokens\": 0}", "invalid_type", "max_tokens"},
             {"{\"prompt\": \"x\", \"max_tokens\": 4294967296}", "invalid_type", "max_tokens"},
             {"{\"prompt\": \"x\", \"seed\": 1.5}", "invalid_type", "seed"},
             {"{\"prompt\": \"x\", \"stream\": \"yes\"}", "invalid_type", "stream"},
             {"{\"prompt\": \"x\", \"stop\": [\"a\", \"b\", \"c\", \"d\", \"e\", \"f\", \"g\", \"h\", \"i\", \"j\", \"k\", "
              "\"l\", \"m\", \"n\", \"o\", \"p\", \"q\"]}",
              "invalid_type", "stop"},
             {"{\"prompt\": \"x\", \"stop\": 3}", "invalid_type", "stop"},
             {"{\"prompt\": \"x\", \"frequency_penalty\": 2.5}", "invalid_type", "frequency_penalty"},
             {"{\"prompt\": \"x\", \"presence_penalty\": \"high\"}", "invalid_type", "presence_penalty"},
             {"{\"prompt\": \"x\", \"logit_bias\": {\"x\": 1}}", "invalid_type", "logit_bias"},
             {"{\"prompt\": \"x\", \"logit_bias\": {\"5\": 101}}", "invalid_type", "logit_bias"},
             {"{\"prompt\": \"x\", \"logit_bias\": [1]}", "invalid_type", "logit_bias"},
             {"{\"prompt\": \"x\", \"stream_options\": {\"include_usage\": 1}}", "invalid_type", "stream_options"},
             {"{\"prompt\": \"x\", \"stream_options\": true}", "invalid_type", "stream_options"},
             {"{\"prompt\": \"x\", \"n\": 17}", "invalid_type", "n"},
             {"{\"prompt\": \"x\", \"model\": 4}", "invalid_type", "model"},
             {"{\"prompt\": 12}", "invalid_type", "prompt"},
             {"{\"prompt\": [\"a\", \"b\"]}", "invalid_type", "prompt"},
             {"{\"max_tokens\": 5}", "missing_field", "prompt"},
         }) {
        CAPTURE(c.body);
        const ApiError e = refusal(c.body);
        CHECK(e.status == 400);
        CHECK(e.type == "invalid_request_error");
        CHECK(e.code == c.code);
        CHECK(e.param == c.param);
        if (*c.param) CHECK_THAT(e.what(), Catch::StartsWith(c.param));
    }
    CHECK(refusal("{\"prompt\": \"x\", \"stop\": " + long_stop + "}").param == "stop");
    // Nesting: a tool's parameter schema 20 objects deep is read (and ignored); past 64 levels the
    // field that nests is named, before any parsing.
    auto nested = [](int levels) {
        std::string schema = "{\"type\": \"string\"}";
        for (int i = 0; i < levels; ++i) schema = "{\"type\": \"object\", \"properties\": {\"a\": " + schema + "}}";
        return "{\"prompt\": \"x\", \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": " +
               schema + "}}]}";
    };
    CHECK(parse_request(nested(20), Endpoint::Completions).prompt == "x");
    const ApiError deep = refusal(nested(40));
    CHECK(deep.param == "tools");
    CHECK_THAT(deep.what(), Catch::StartsWith("tools is nested deeper than 64 levels"));
    CHECK(refusal(std::string(100, '[') + std::string(100, ']')).code == "invalid_value");
    // A key that is no field's name (the fuzzer's: NULs and stray bytes) is not repeated back.
    const ApiError odd = refusal("{\"prompt\": \"x\", \"\x01\x8b\": " + std::string(70, '[') + std::string(70, ']') + "}");
    CHECK(odd.param.empty());
    CHECK_THAT(odd.what(), Catch::StartsWith("the request body is nested deeper"));
    for (const char* chat : {R"({"prompt": "x"})", R"({"messages": []})", R"({"messages": [{"role": "robot", "content": "x"}]})",
                             R"({"messages": [{"role": "user"}]})", R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})",
                             R"({"messages": ["hi"]})"}) {
        CAPTURE(chat);
        const ApiError e = refusal(chat, Endpoint::ChatCompletions);
        CHECK(e.status == 400);
        CHECK_THAT(e.param, Catch::StartsWith("messages"));
    }
}

TEST_CASE("chat messages keep their roles, text and tool calls in any order", "[serve]") {
    const ApiRequest r = parse_request(
        R"({"messages": [{"role": "assistant", "content": "Hello."}, {"role": "developer", "content": "Be kind."},
                         {"role": "user", "content": [{"type": "text", "text": "Hi "}, {"type": "text", "text": "there"}]},
                         {"role": "user", "content": "Weather?"},
                         {"role": "assistant", "content": null, "tool_calls": [
                             {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}},
                             {"id": "c2", "type": "function", "function": {"name": "now", "arguments": {"tz": "CET"}}}]},
                         {"role": "tool", "tool_call_id": "c1", "content": "-3 C"}, {"role": "system", "content": "Late."},
                         {"role": "assistant", "content": "It is"}]})",
        Endpoint::ChatCompletions);
    const std::vector<ChatMessage> expected = {
        {ChatRole::Assistant, "Hello.", {}},
        {ChatRole::System, "Be kind.", {}},
        {ChatRole::User, "Hi there", {}},
        {ChatRole::User, "Weather?", {}},
        {ChatRole::Assistant, "", {{"c1", "get_weather", "{\"city\": \"Oslo\"}"}, {"c2", "now", "{\"tz\":\"CET\"}"}}},
        {ChatRole::Tool, "-3 C", {}},
        {ChatRole::System, "Late.", {}},
        {ChatRole::Assistant, "It is", {}}};
    CHECK(r.messages == expected);
    // The family's default system prompt goes first only where the client gave none first.
    CHECK(with_default_system(r.messages, "default").front() == ChatMessage{ChatRole::System, "default", {}});
    CHECK(with_default_system(r.messages, "").size() == r.messages.size());
    const std::vector<ChatMessage> own = {{ChatRole::System, "mine", {}}, {ChatRole::User, "q", {}}};
    CHECK(with_default_system(own, "default") == own);
    // A malformed call names itself.
    for (const char* bad : {R"([{"id": "c", "function": {"arguments": "{}"}}])", R"({"name": "f"})",
                            R"([{"function": {"name": "f", "arguments": 3}}])"}) {
        CAPTURE(bad);
        const ApiError e = refusal(std::string(R"({"messages": [{"role": "assistant", "content": null, "tool_calls": )") + bad + "}]}",
                                   Endpoint::ChatCompletions);
        CHECK_THAT(e.param, Catch::StartsWith("messages[0].tool_calls"));
    }
}

TEST_CASE("reply text goes out in whole UTF-8 characters and ends before a stop string", "[serve]") {
    ReplyText t({"END"});
    CHECK(t.feed("caf\xC3") == "caf");  // é's first byte waits for its second
    CHECK(t.feed("\xA9 \xE2\x82") == "\xC3\xA9 ");
    CHECK(t.feed("\xAC E") == "\xE2\x82\xAC ");  // "E" may begin END
    CHECK(t.feed("N") == "");
    CHECK(t.feed("Dx") == "");
    CHECK(t.stopped());
    CHECK(t.finish() == "");
    ReplyText cut({});
    CHECK(cut.feed("ab\xF0\x9F") == "ab");
    CHECK(cut.finish() == "\xF0\x9F");  // never completed: sent as it is (JSON replaces it)
    CHECK(incomplete_utf8_tail("a\xE2") == 1);
    CHECK(incomplete_utf8_tail("\xE2\x82\xAC") == 0);
    CHECK(incomplete_utf8_tail("\x82") == 0);  // a stray continuation byte completes nothing
}

TEST_CASE("replies, stream events and errors have OpenAI's shape", "[serve]") {
    ReplyStats stats;
    stats.generation.prompt_tokens = 5;
    stats.generation.new_tokens = 8;
    stats.generation.steps = 4;
    stats.generation.drafted = 6;
    stats.generation.accepted = 3;
    stats.generation.decode_ms = 2;
    stats.drafter = "n-gram lookup";
    stats.accept = "greedy";
    const ReplyHeader chat{"chatcmpl-3", 1700000000, "m.gguf", Endpoint::ChatCompletions};
    const json reply = json::parse(reply_body(chat, {{"caf\xC3", FinishReason::Stop, {}}}, stats));
    CHECK(reply["object"] == "chat.completion");
    CHECK(reply["choices"][0]["message"]["content"] == "caf\xEF\xBF\xBD");  // the cut character as U+FFFD
    CHECK(reply["choices"][0]["finish_reason"] == "stop");
    CHECK(reply["usage"] == json{{"prompt_tokens", 5}, {"completion_tokens", 8}, {"total_tokens", 13}});
    CHECK(reply["speculative"]["tokens_per_step"] == 2.0);
    CHECK(reply["speculative"]["drafted_tokens"] == 6);
    CHECK(reply["speculative"]["accepted_tokens"] == 3);
    CHECK(reply["speculative"]["tokens_per_second"] == 4000.0);
    CHECK(reply["speculative"]["drafter"] == "n-gram lookup");
    const std::string opening = opening_event(chat);
    REQUIRE(opening.rfind("data: ", 0) == 0);
    CHECK(json::parse(opening.substr(6))["choices"][0]["delta"]["role"] == "assistant");
    const std::string closing = closing_events(chat, 0, FinishReason::Length, stats);
    CHECK(closing.size() > 20);
    CHECK(closing.substr(closing.size() - 14) == "data: [DONE]\n\n");
    const json finish = json::parse(closing.substr(6, closing.find("\n\n") - 6));
    CHECK(finish["choices"][0]["finish_reason"] == "length");
    CHECK_FALSE(finish.contains("usage"));  // not asked for
    CHECK(closing.find("\"usage\"") == std::string::npos);
    // stream_options.include_usage: the usage in a chunk of its own, with no choices, before [DONE].
    ReplyHeader with_usage = chat;
    with_usage.include_usage = true;
    const std::string closed = closing_events(with_usage, 0, FinishReason::Stop, stats);
    const size_t second = closed.find("\n\n") + 2;
    const json usage_chunk = json::parse(closed.substr(second + 6, closed.find("\n\n", second) - second - 6));
    CHECK(usage_chunk["choices"] == json::array());
    CHECK(usage_chunk["usage"] == json{{"prompt_tokens", 5}, {"completion_tokens", 8}, {"total_tokens", 13}});
    CHECK(closed.substr(closed.size() - 14) == "data: [DONE]\n\n");
    const ReplyHeader completion{"cmpl-4", 1, "m", Endpoint::Completions};
    CHECK(opening_event(completion).empty());
    CHECK(json::parse(text_event(completion, 0, "ab", {}, 0).substr(6))["choices"][0]["text"] == "ab");
    const json error = json::parse(error_body(invalid_request("invalid_type", "top_k must be ...", "top_k")));
    CHECK(error == json{{"error", {{"message", "top_k must be ..."}, {"type", "invalid_request_error"}, {"param", "top_k"},
                                   {"code", "invalid_type"}}}});
}

TEST_CASE("n choices, echo and log-probabilities have OpenAI's shape, whole and streamed", "[serve]") {
    ReplyStats stats;
    stats.generation.prompt_tokens = 2;
    stats.generation.new_tokens = 5;
    const std::vector<TokenLogprobText> tokens = {{"He", -0.5f, {{"He", -0.5f}, {"It", -1.25f}}}, {"llo", -0.25f, {{"llo", -0.25f}, {"y", -2.0f}}}};
    ReplyHeader chat{"chatcmpl-5", 1, "m", Endpoint::ChatCompletions};
    chat.choices = 2;
    chat.logprobs = true;
    const json reply = json::parse(reply_body(chat, {{"Hello", FinishReason::Stop, tokens}, {"Hi", FinishReason::Length, {}}}, stats));
    REQUIRE(reply["choices"].size() == 2);
    CHECK(reply["choices"][1]["index"] == 1);
    CHECK(reply["choices"][1]["message"]["content"] == "Hi");
    CHECK(reply["choices"][1]["finish_reason"] == "length");
    const json content = reply["choices"][0]["logprobs"]["content"];
    REQUIRE(content.size() == 2);
    CHECK(content[1] == json{{"token", "llo"}, {"logprob", -0.25}, {"bytes", {108, 108, 111}},
                             {"top_logprobs", {{{"token", "llo"}, {"logprob", -0.25}, {"bytes", {108, 108, 111}}},
                                               {{"token", "y"}, {"logprob", -2.0}, {"bytes", {121}}}}}});
    CHECK(reply["usage"]["completion_tokens"] == 5);
    // Streamed: each choice's role first, pieces with their tokens, a finish as a choice ends.
    CHECK(json::parse(opening_event(chat).substr(6))["choices"].size() == 2);
    const json piece = json::parse(text_event(chat, 1, "Hello", tokens, 0).substr(6));
    CHECK(piece["choices"][0]["index"] == 1);
    CHECK(piece["choices"][0]["logprobs"]["content"][0]["token"] == "He");
    CHECK(json::parse(finish_event(chat, 0, FinishReason::Stop).substr(6))["choices"][0]["finish_reason"] == "stop");
    // A completion's logprobs: tokens, their log-probabilities, the likeliest and where each starts,
    // after the echoed prompt.
    ReplyHeader completion{"cmpl-6", 1, "m", Endpoint::Completions};
    completion.logprobs = true;
    const json lp = json::parse(reply_body(completion, {{"Hello", FinishReason::Stop, tokens}}, stats))["choices"][0]["logprobs"];
    CHECK(lp == json{{"tokens", {"He", "llo"}}, {"token_logprobs", {-0.5, -0.25}},
                     {"top_logprobs", {{{"He", -0.5}, {"It", -1.25}}, {{"llo", -0.25}, {"y", -2.0}}}}, {"text_offset", {0, 2}}});
    CHECK(json::parse(text_event(completion, 0, "llo", {tokens[1]}, 2).substr(6))["choices"][0]["logprobs"]["text_offset"] == json{2});
    ReplyHeader echo{"cmpl-7", 1, "m", Endpoint::Completions};
    echo.echo = "Say: ";
    CHECK(json::parse(reply_body(echo, {{"Hello", FinishReason::Stop, {}}}, stats))["choices"][0]["text"] == "Say: Hello");
    CHECK(json::parse(reply_body(echo, {{"Hello", FinishReason::Stop, {}}}, stats))["choices"][0]["logprobs"].is_null());
    CHECK(json::parse(opening_event(echo).substr(6))["choices"][0]["text"] == "Say: ");
}

TEST_CASE("logprobs, top_logprobs, n, echo and response_format are read or refused by name", "[serve]") {
    CHECK(parse_request(R"({"messages": [{"role": "user", "content": "x"}], "logprobs": true, "top_logprobs": 4})",
                        Endpoint::ChatCompletions).logprobs == 4);
    CHECK(parse_request(R"({"messages": [{"role": "user", "content": "x"}], "logprobs": true})", Endpoint::ChatCompletions)
              .logprobs == 0);
    CHECK_FALSE(parse_request(R"({"messages": [{"role": "user", "content": "x"}], "logprobs": false})",
                              Endpoint::ChatCompletions).logprobs);
    CHECK(parse_request(R"({"prompt": "x", "logprobs": 3, "n": 3})", Endpoint::Completions).logprobs == 3);
    CHECK(parse_request(R"({"prompt": "x", "logprobs": 3, "n": 3})", Endpoint::Completions).n == 3);
    CHECK(parse_request(R"({"prompt": "x", "echo": true})", Endpoint::Completions).echo);
    CHECK(parse_request(R"({"prompt": "x", "response_format": {"type": "text"}})", Endpoint::Completions).prompt == "x");
    struct Bad {
        std::string body;
        Endpoint endpoint;
        const char* param;
    };
    for (const Bad& b : std::vector<Bad>{
             {R"({"messages": [{"role": "user", "content": "x"}], "top_logprobs": 2})", Endpoint::ChatCompletions, "top_logprobs"},
             {R"({"messages": [{"role": "user", "content": "x"}], "logprobs": true, "top_logprobs": 21})", Endpoint::ChatCompletions, "top_logprobs"},
             {R"({"messages": [{"role": "user", "content": "x"}], "logprobs": 2})", Endpoint::ChatCompletions, "logprobs"},
             {R"({"prompt": "x", "logprobs": 6})", Endpoint::Completions, "logprobs"},
             {R"({"prompt": "x", "logprobs": true})", Endpoint::Completions, "logprobs"},
             {R"({"prompt": "x", "n": 17})", Endpoint::Completions, "n"},
             {R"({"prompt": "x", "n": 0})", Endpoint::Completions, "n"},
             {R"({"prompt": "x", "echo": true, "logprobs": 1})", Endpoint::Completions, "echo"},
             {R"({"prompt": "x", "echo": "yes"})", Endpoint::Completions, "echo"},
             {R"({"prompt": "x", "response_format": {"type": "json_object"}})", Endpoint::Completions, "response_format"},
             {R"({"messages": [{"role": "user", "content": "x"}], "response_format": {"type": "json_schema", "json_schema": {}}})",
              Endpoint::ChatCompletions, "response_format"},
             {R"({"prompt": "x", "response_format": "json"})", Endpoint::Completions, "response_format"}}) {
        CAPTURE(b.body);
        const ApiError e = refusal(b.body, b.endpoint);
        CHECK(e.status == 400);
        CHECK(e.param == b.param);
    }
}

TEST_CASE("tools are offered as the templates' tojson writes them, and a reply's tool calls are handed over", "[serve]") {
    // The tools of the chat-shape fixtures, whose JSON Python's json.dumps wrote beside them.
    const std::string shapes = std::string(MEDUSA_SOURCE_DIR) + "/tests/data/chat_shapes/";
    const std::string name = "tools offered with a system message";
    json tools;
    for (const json& c : medusa::read_json_file(shapes + "conversations.json"))
        if (c["name"] == name) tools = c["tools"];
    REQUIRE(tools.size() == 2);
    // The body's own text, key order and all (the fixture's keys are not alphabetical).
    std::ifstream f(shapes + "conversations.json");
    const std::string text((std::istreambuf_iterator<char>(f)), {});
    const size_t at = text.find("\"tools\": [", text.find(name));
    const size_t end = text.find("\n  ],", at) + 4;  // the array's closing bracket
    const std::string body = "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], " + text.substr(at, end - at) + "}";
    const ApiRequest r = parse_request(body, Endpoint::ChatCompletions);
    CHECK(r.tools == medusa::read_json_file(shapes + "expected.json")[name]["_tools"].get<std::vector<std::string>>());
    CHECK(parse_request(body.substr(0, body.size() - 1) + ", \"tool_choice\": \"none\"}", Endpoint::ChatCompletions).tools.empty());
    CHECK(refusal(R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function"}]})", Endpoint::ChatCompletions)
              .param == "tools");
    CHECK(refusal(R"({"messages": [{"role": "user", "content": "x"}], "tools": [], "tool_choice": 3})", Endpoint::ChatCompletions)
              .param == "tool_choice");

    // The model's <tool_call> blocks: arguments as an object or a string; what is no call stays text.
    const ReplyToolCalls calls = parse_tool_calls(
        "Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>\n"
        "<tool_call>{\"name\": \"now\", \"arguments\": \"{}\"}</tool_call><tool_call>not json</tool_call> <tool_call>{\"name\":",
        "call_x");
    REQUIRE(calls.calls.size() == 2);
    CHECK(calls.calls[0] == ToolCall{"call_x_0", "get_weather", "{\"city\":\"Oslo\"}"});
    CHECK(calls.calls[1] == ToolCall{"call_x_1", "now", "{}"});
    CHECK(calls.content == "Checking.\n\n<tool_call>not json</tool_call> <tool_call>{\"name\":");
    CHECK(parse_tool_calls("no calls", "c").calls.empty());

    // As OpenAI hands them over: the message's tool_calls, no content, the finish "tool_calls".
    ReplyHeader h{"chatcmpl-9", 1, "m", Endpoint::ChatCompletions};
    h.tools = true;
    ReplyChoice c{"<tool_call>{\"name\": \"now\"}</tool_call>", FinishReason::Stop, {}, {}};
    take_tool_calls(h, 0, c);
    CHECK(c.finish == FinishReason::ToolCalls);
    const json reply = json::parse(reply_body(h, {c}, ReplyStats{}))["choices"][0];
    CHECK(reply["finish_reason"] == "tool_calls");
    CHECK(reply["message"]["content"].is_null());
    CHECK(reply["message"]["tool_calls"] == json::parse(R"([{"id": "call_chatcmpl-9_0_0", "type": "function",
                                                             "function": {"name": "now", "arguments": "{}"}}])"));
    const json delta = json::parse(held_reply_events(h, 0, c).substr(6))["choices"][0]["delta"];
    CHECK(delta["tool_calls"][0]["index"] == 0);
    CHECK(delta["tool_calls"][0]["function"]["name"] == "now");
    // Without tools offered, the same text is the reply's text.
    ReplyChoice plain{"<tool_call>{\"name\": \"now\"}</tool_call>", FinishReason::Stop, {}, {}};
    take_tool_calls(ReplyHeader{"chatcmpl-9", 1, "m", Endpoint::ChatCompletions}, 0, plain);
    CHECK(plain.tool_calls.empty());
}

TEST_CASE("the queue holds as many requests as it has slots, in order, and closing fails the waiting", "[serve]") {
    RequestQueue q(2);
    auto a = std::make_shared<GenerationJob>(), b = std::make_shared<GenerationJob>(), c = std::make_shared<GenerationJob>();
    CHECK(q.admit(a));
    CHECK(q.admit(b));
    CHECK_FALSE(q.admit(c));  // full: the server answers 503
    CHECK(q.take() == a);
    CHECK(q.counts().running == 1);
    CHECK(q.counts().waiting == 1);
    CHECK_FALSE(q.admit(c));  // a running request holds its slot
    q.finished();
    CHECK(q.admit(c));
    CHECK(q.take() == b);
    q.close(ApiError(503, "server_error", "shutting_down", "stopping"));
    CHECK(b->cancelled());  // the running one stops after its step
    const auto failed = c->receive(std::chrono::milliseconds(0));
    REQUIRE(failed);
    CHECK(failed->kind == JobEvent::Kind::Failed);
    CHECK(failed->error->code == "shutting_down");
    CHECK(q.take() == nullptr);
    CHECK_FALSE(q.admit(std::make_shared<GenerationJob>()));
}

TEST_CASE("web pages of this machine may call the server, others only when --cors names them", "[serve]") {
    const CorsPolicy local;
    for (const char* o : {"http://localhost", "http://localhost:5173", "http://127.0.0.1:8080", "http://127.0.0.1"}) {
        CAPTURE(o);
        CHECK(local.allows(o));
    }
    for (const char* o : {"", "null", "http://localhost.evil.com", "http://localhost:80/x", "http://localhost:", "http://127.0.0.10",
                          "https://chat.example.com", "http://localhost:1234567", "file://"}) {
        CAPTURE(o);
        CHECK_FALSE(local.allows(o));
    }
    const CorsPolicy named({"https://chat.example.com", "http://intranet:3000"});
    CHECK(named.allows("https://chat.example.com"));
    CHECK(named.allows("http://intranet:3000"));
    CHECK(named.allows("http://localhost:3000"));
    CHECK_FALSE(named.allows("https://chat.example.com.evil.com"));
    CHECK_FALSE(named.allows("http://chat.example.com"));
    CHECK(CorsPolicy({"*"}).allows("https://anything.example"));
    for (const char* bad : {"chat.example.com", "https://chat.example.com/", "ftp://x", "https://", "", "http://a b"}) {
        CAPTURE(bad);
        CHECK_THROWS_AS(CorsPolicy({bad}), std::invalid_argument);
    }
}
