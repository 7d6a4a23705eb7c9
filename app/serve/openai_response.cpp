#include "openai_response.h"

#include <nlohmann/json.hpp>

#include "tool_calls.h"

namespace medusa::serve {

namespace {

using json = nlohmann::ordered_json;

// Model text may hold bytes that are not UTF-8 (a cut character at the end of a reply): each
// becomes U+FFFD rather than failing the reply.
std::string text_of(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string event(const json& j) { return "data: " + text_of(j) + "\n\n"; }

bool chat(const ReplyHeader& h) { return h.endpoint == Endpoint::ChatCompletions; }

json header_fields(const ReplyHeader& h, bool chunk) {
    return {{"id", h.id},
            {"object", chat(h) ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion"},
            {"created", h.created},
            {"model", h.model}};
}

json usage(const GenerationStats& g) {
    return {{"prompt_tokens", g.prompt_tokens},
            {"completion_tokens", g.new_tokens},
            {"total_tokens", g.prompt_tokens + g.new_tokens}};
}

json speculative(const ReplyStats& s) {
    const GenerationStats& g = s.generation;
    return {{"drafter", s.drafter},
            {"accept", s.accept},
            {"steps", g.steps},
            {"tokens_per_step", g.tokens_per_step()},
            {"drafted_steps", g.drafted_steps},
            {"drafted_tokens", g.drafted},
            {"accepted_tokens", g.accepted},
            {"acceptance", g.acceptance()},
            {"tokens_per_second", g.decode_tokens_per_s()},
            {"prefill_ms", g.prefill_ms},
            {"decode_ms", g.decode_ms},
            {"stop", stop_reason_name(g.stop_reason)}};
}

json bytes_of(const std::string& text) {
    json b = json::array();
    for (unsigned char c : text) b.push_back(int(c));
    return b;
}

// OpenAI's logprobs object of `tokens`: a chat's {"content": [{token, logprob, bytes,
// top_logprobs}]}, a completion's {tokens, token_logprobs, top_logprobs, text_offset}, the
// offsets counted from `offset`.
json logprobs_of(const ReplyHeader& h, const std::vector<TokenLogprobText>& tokens, size_t offset) {
    if (chat(h)) {
        json content = json::array();
        for (const TokenLogprobText& t : tokens) {
            json top = json::array();
            for (const auto& [text, lp] : t.top) top.push_back({{"token", text}, {"logprob", lp}, {"bytes", bytes_of(text)}});
            content.push_back({{"token", t.text}, {"logprob", t.logprob}, {"bytes", bytes_of(t.text)}, {"top_logprobs", top}});
        }
        return {{"content", content}, {"refusal", nullptr}};
    }
    json texts = json::array(), lps = json::array(), tops = json::array(), offsets = json::array();
    for (const TokenLogprobText& t : tokens) {
        texts.push_back(t.text);
        lps.push_back(t.logprob);
        json top = json::object();
        for (const auto& [text, lp] : t.top) top[text] = lp;
        tops.push_back(top);
        offsets.push_back(offset);
        offset += t.text.size();
    }
    return {{"tokens", texts}, {"token_logprobs", lps}, {"top_logprobs", tops}, {"text_offset", offsets}};
}

json tool_calls_json(const std::vector<ToolCall>& calls, bool chunk) {
    json out = json::array();
    for (size_t i = 0; i < calls.size(); ++i) {
        json c = {{"id", calls[i].id}, {"type", "function"}, {"function", {{"name", calls[i].name}, {"arguments", calls[i].arguments}}}};
        if (chunk) c["index"] = i;
        out.push_back(c);
    }
    return out;
}

// One choice: a completion's text, a chat reply's message, or a chunk's delta of either.
json choice(const ReplyHeader& h, int index, const std::string& text, const json& finish, bool chunk,
            const json& logprobs = nullptr, const std::vector<ToolCall>& calls = {}) {
    json c = {{"index", index}};
    if (!chat(h)) {
        c["text"] = text;
    } else if (chunk) {
        c["delta"] = text.empty() ? json::object() : json{{"content", text}};
        if (!calls.empty()) c["delta"]["tool_calls"] = tool_calls_json(calls, true);
    } else {
        c["message"] = {{"role", "assistant"}, {"content", text.empty() && !calls.empty() ? json(nullptr) : json(text)}};
        if (!calls.empty()) c["message"]["tool_calls"] = tool_calls_json(calls, false);
    }
    c["logprobs"] = logprobs;
    c["finish_reason"] = finish;
    return c;
}

}  // namespace

const char* finish_reason_name(FinishReason r) {
    switch (r) {
    case FinishReason::Stop: return "stop";
    case FinishReason::Length: return "length";
    case FinishReason::ToolCalls: return "tool_calls";
    }
    return "stop";
}

void take_tool_calls(const ReplyHeader& h, int index, ReplyChoice& c) {
    if (!h.tools) return;
    ReplyToolCalls parsed = parse_tool_calls(c.text, "call_" + h.id + "_" + std::to_string(index));
    if (parsed.calls.empty()) return;
    c.text = std::move(parsed.content);
    c.tool_calls = std::move(parsed.calls);
    c.finish = FinishReason::ToolCalls;
}

std::string held_reply_events(const ReplyHeader& h, int index, const ReplyChoice& c) {
    json j = header_fields(h, true);
    j["choices"] = json::array(
        {choice(h, index, c.text, nullptr, true, h.logprobs ? logprobs_of(h, c.tokens, 0) : json(nullptr), c.tool_calls)});
    return event(j);
}

std::string error_body(const ApiError& e) {
    return text_of({{"error",
                     {{"message", e.what()},
                      {"type", e.type},
                      {"param", e.param.empty() ? json(nullptr) : json(e.param)},
                      {"code", e.code.empty() ? json(nullptr) : json(e.code)}}}});
}

std::string reply_body(const ReplyHeader& h, const std::vector<ReplyChoice>& choices, const ReplyStats& stats) {
    json j = header_fields(h, false);
    j["choices"] = json::array();
    for (size_t i = 0; i < choices.size(); ++i) {
        const ReplyChoice& c = choices[i];
        j["choices"].push_back(choice(h, int(i), h.echo + c.text, finish_reason_name(c.finish), false,
                                      h.logprobs ? logprobs_of(h, c.tokens, h.echo.size()) : json(nullptr), c.tool_calls));
    }
    j["usage"] = usage(stats.generation);
    j["speculative"] = speculative(stats);
    return text_of(j);
}

std::string opening_event(const ReplyHeader& h) {
    if (!chat(h) && h.echo.empty()) return "";
    json j = header_fields(h, true);
    j["choices"] = json::array();
    for (int i = 0; i < h.choices; ++i) {
        if (chat(h)) j["choices"].push_back({{"index", i}, {"delta", {{"role", "assistant"}, {"content", ""}}}, {"finish_reason", nullptr}});
        else j["choices"].push_back(choice(h, i, h.echo, nullptr, true));
    }
    return event(j);
}

std::string text_event(const ReplyHeader& h, int index, const std::string& text,
                       const std::vector<TokenLogprobText>& tokens, size_t offset) {
    json j = header_fields(h, true);
    j["choices"] = json::array({choice(h, index, text, nullptr, true, h.logprobs ? logprobs_of(h, tokens, offset) : json(nullptr))});
    return event(j);
}

std::string finish_event(const ReplyHeader& h, int index, FinishReason finish) {
    json j = header_fields(h, true);
    j["choices"] = json::array({choice(h, index, "", finish_reason_name(finish), true)});
    return event(j);
}

std::string closing_events(const ReplyHeader& h, int index, FinishReason finish, const ReplyStats& stats) {
    json j = header_fields(h, true);
    j["choices"] = json::array({choice(h, index, "", finish_reason_name(finish), true)});
    j["speculative"] = speculative(stats);
    std::string out = event(j);
    if (h.include_usage) {
        json u = header_fields(h, true);
        u["choices"] = json::array();
        u["usage"] = usage(stats.generation);
        out += event(u);
    }
    return out + "data: [DONE]\n\n";
}

std::string error_event(const ApiError& e) { return "data: " + error_body(e) + "\n\n"; }

namespace {

json model_object(const std::string& model, int64_t created) {
    return {{"id", model}, {"object", "model"}, {"created", created}, {"owned_by", "medusa"}};
}

}  // namespace

std::string models_body(const std::string& model, int64_t created) {
    return text_of({{"object", "list"}, {"data", json::array({model_object(model, created)})}});
}

std::string model_body(const std::string& model, int64_t created) { return text_of(model_object(model, created)); }

}  // namespace medusa::serve
