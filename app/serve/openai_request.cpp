#include "openai_request.h"

#include <climits>
#include <cmath>
#include <nlohmann/json.hpp>

#include "model/json_file.h"
#include "model/model_file.h"

namespace medusa::serve {

namespace {

// Ordered: a tool's JSON keeps the request's key order when it is written into the prompt.
using json = nlohmann::ordered_json;

// Messages and their parts nest a few levels, but a tool's parameter schema or a response_format's
// JSON schema nests as deep as its objects do; within the 1 MiB body, deeper than this is refused
// before parsing (the parser recurses once a level), naming the field that holds it.
constexpr int kMaxRequestDepth = 64;

// Refuses a body nested deeper than kMaxRequestDepth, naming the top-level field where it is.
void check_request_depth(const char* begin, const char* end) {
    std::optional<std::string> key = json_too_deep(begin, end, kMaxRequestDepth);
    if (!key) return;
    // Named when it is a field's name (the text between the quotes, escapes and all, may hold
    // anything before the parser has seen it).
    const bool named = !key->empty() && key->size() <= 64 &&
                       key->find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string::npos;
    if (!named) key->clear();
    throw invalid_request("invalid_value",
                          (named ? *key : "the request body") + " is nested deeper than " +
                              std::to_string(kMaxRequestDepth) + " levels",
                          *key);
}

ApiError wrong_field(const std::string& name, const std::string& expected, const json& value) {
    return invalid_request("invalid_type", name + " must be " + expected + ", not " + json_excerpt(value), name);
}

// The field's value; nullopt when it is absent or null (clients send null for "not set").
const json* field(const json& body, const char* name) {
    const auto it = body.find(name);
    return it == body.end() || it->is_null() ? nullptr : &*it;
}

std::optional<float> number_in(const json& body, const char* name, double lo, double hi, bool lo_open,
                               const std::string& range) {
    const json* v = field(body, name);
    if (!v) return std::nullopt;
    if (!v->is_number()) throw wrong_field(name, "a number " + range, *v);
    const double x = v->get<double>();
    if (!std::isfinite(x) || x > hi || x < lo || (lo_open && x == lo)) throw wrong_field(name, "a number " + range, *v);
    return float(x);
}

std::optional<int> integer_in(const json& body, const char* name, int64_t lo, const std::string& range,
                              int64_t hi = INT_MAX) {
    const json* v = field(body, name);
    if (!v) return std::nullopt;
    if (!v->is_number_integer()) throw wrong_field(name, "an integer " + range, *v);
    // JSON reads a non-negative integer as unsigned, a negative one as signed.
    const bool fits = v->is_number_unsigned() ? v->get<uint64_t>() <= uint64_t(hi) && int64_t(v->get<uint64_t>()) >= lo
                                              : v->get<int64_t>() >= lo && v->get<int64_t>() <= hi;
    if (!fits) throw wrong_field(name, "an integer " + range, *v);
    return int(v->get<int64_t>());
}

SamplingFields sampling_fields(const json& body) {
    SamplingFields s;
    s.temperature = number_in(body, "temperature", 0, 2, false, "from 0 to 2");
    s.top_p = number_in(body, "top_p", 0, 1, true, "above 0 and at most 1");
    s.min_p = number_in(body, "min_p", 0, 1, false, "from 0 to 1");
    if (s.min_p && *s.min_p >= 1) throw wrong_field("min_p", "a number from 0 to 1 (1 excluded)", body["min_p"]);
    s.top_k = integer_in(body, "top_k", 0, "of at least 0 (0: off)");
    s.max_tokens = integer_in(body, "max_tokens", 1, "of at least 1");
    if (const auto m = integer_in(body, "max_completion_tokens", 1, "of at least 1")) s.max_tokens = m;
    if (const json* v = field(body, "seed")) {
        if (!v->is_number_integer()) throw wrong_field("seed", "an integer", *v);
        s.seed = v->is_number_unsigned() ? v->get<uint64_t>() : uint64_t(v->get<int64_t>());
    }
    s.frequency_penalty = number_in(body, "frequency_penalty", -2, 2, false, "from -2 to 2");
    s.presence_penalty = number_in(body, "presence_penalty", -2, 2, false, "from -2 to 2");
    if (const json* v = field(body, "logit_bias")) {
        const std::string expected = "an object of at most " + std::to_string(kMaxLogitBias) +
                                     " token ids (\"50256\") to biases from -100 to 100";
        if (!v->is_object() || v->size() > kMaxLogitBias) throw wrong_field("logit_bias", expected, *v);
        for (const auto& [key, bias] : v->items()) {
            size_t used = 0;
            long id = -1;
            try {
                id = std::stol(key, &used);
            } catch (const std::exception&) {
            }
            if (used != key.size() || id < 0 || id >= (1L << 22) || !bias.is_number() || !(std::fabs(bias.get<double>()) <= 100))
                throw wrong_field("logit_bias", expected, *v);
            s.logit_bias.push_back({int(id), bias.get<float>()});
        }
    }
    return s;
}

// `v` as Python's json.dumps(v, ensure_ascii=False) writes it: ", " and ": " between items, the
// object's keys in the request's order.
std::string python_json(const json& v) {
    if (v.is_object()) {
        std::string out = "{";
        for (auto it = v.begin(); it != v.end(); ++it)
            out += (it == v.begin() ? "" : ", ") + json(it.key()).dump() + ": " + python_json(it.value());
        return out + "}";
    }
    if (v.is_array()) {
        std::string out = "[";
        for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + python_json(v[i]);
        return out + "]";
    }
    return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

// A chat's tools: [{"type": "function", "function": {"name": ..., ...}}], none when tool_choice is "none".
std::vector<std::string> tools_offered(const json& body) {
    const json* it = field(body, "tools");
    if (!it) return {};
    const std::string expected = "an array of at most " + std::to_string(kMaxTools) +
                                 " tools {\"type\": \"function\", \"function\": {\"name\": ...}}";
    if (!it->is_array() || it->size() > kMaxTools) throw wrong_field("tools", expected, *it);
    std::vector<std::string> tools;
    for (const auto& tool : *it) {
        const bool function = tool.is_object() && tool.contains("function") && tool["function"].is_object() &&
                              tool["function"].contains("name") && tool["function"]["name"].is_string();
        if (!function) throw wrong_field("tools", expected, tool);
        tools.push_back(python_json(tool));
    }
    if (const json* c = field(body, "tool_choice")) {
        if (!(c->is_string() && (*c == "none" || *c == "auto" || *c == "required")) && !c->is_object())
            throw wrong_field("tool_choice", "\"none\", \"auto\", \"required\" or a named function", *c);
        if (*c == "none") return {};
    }
    return tools;
}

// Chat: logprobs true or false, top_logprobs 0..20 beside it; completion: logprobs 0..5.
std::optional<int> logprobs_asked(const json& body, Endpoint endpoint) {
    if (endpoint == Endpoint::Completions) return integer_in(body, "logprobs", 0, "from 0 to 5", 5);
    const json* on = field(body, "logprobs");
    if (on && !on->is_boolean()) throw wrong_field("logprobs", "true or false", *on);
    const std::string range = "from 0 to " + std::to_string(kMaxTopLogprobs);
    const std::optional<int> top = integer_in(body, "top_logprobs", 0, range, kMaxTopLogprobs);
    if (!on || !on->get<bool>()) {
        if (top) throw invalid_request("invalid_value", "top_logprobs needs logprobs: true", "top_logprobs");
        return std::nullopt;
    }
    return top.value_or(0);
}

std::vector<std::string> stop_strings(const json& body) {
    const json* v = field(body, "stop");
    if (!v) return {};
    const std::string expected =
        "a string or an array of at most " + std::to_string(kMaxStopStrings) + " strings of at most " +
        std::to_string(kMaxStopBytes) + " bytes";
    std::vector<std::string> stops;
    auto add = [&](const json& s) {
        if (!s.is_string() || s.get_ref<const std::string&>().size() > kMaxStopBytes) throw wrong_field("stop", expected, *v);
        if (!s.get_ref<const std::string&>().empty()) stops.push_back(s.get<std::string>());  // "" would stop at once
    };
    if (v->is_array()) {
        if (v->size() > kMaxStopStrings) throw wrong_field("stop", expected, *v);
        for (const json& s : *v) add(s);
    } else {
        add(*v);
    }
    return stops;
}

std::string prompt_text(const json& body) {
    const json* v = field(body, "prompt");
    if (!v) throw invalid_request("missing_field", "prompt is missing: a completion needs a prompt string", "prompt");
    if (v->is_string()) return v->get<std::string>();
    // OpenAI also takes a list of prompts, each answered in turn; one is all this server answers.
    if (v->is_array() && v->size() == 1 && (*v)[0].is_string()) return (*v)[0].get<std::string>();
    throw wrong_field("prompt", "a string (or an array of one string)", *v);
}

ChatRole role_of(const json& m, size_t i) {
    const std::string name = "messages[" + std::to_string(i) + "].role";
    const std::string expected = "\"system\", \"user\", \"assistant\" or \"tool\"";
    const auto it = m.find("role");
    if (it == m.end() || !it->is_string()) throw wrong_field(name, expected, m);
    const std::string& r = it->get_ref<const std::string&>();
    if (r == "system" || r == "developer") return ChatRole::System;  // "developer": OpenAI's newer name
    if (r == "user") return ChatRole::User;
    if (r == "assistant") return ChatRole::Assistant;
    if (r == "tool" || r == "function") return ChatRole::Tool;  // "function": the older API's tool result
    throw wrong_field(name, expected, *it);
}

// A string, or an array of {"type": "text", "text": ...} parts; an assistant's null content (a
// message that only called tools) is empty.
std::string content_of(const json& m, size_t i, ChatRole role) {
    const std::string name = "messages[" + std::to_string(i) + "].content";
    const auto it = m.find("content");
    if (it == m.end() || (it->is_null() && role != ChatRole::Assistant))
        throw invalid_request("missing_field", name + " is missing", name);
    if (it->is_null()) return "";
    if (it->is_string()) return it->get<std::string>();
    if (!it->is_array()) throw wrong_field(name, "a string or an array of text parts", *it);
    std::string text;
    for (const json& part : *it) {
        const bool text_part = part.is_object() && part.value("type", json()) == "text" && part.contains("text") &&
                               part["text"].is_string();
        if (!text_part) throw wrong_field(name, "a string or an array of text parts ({\"type\": \"text\", \"text\": ...})", part);
        text += part["text"].get_ref<const std::string&>();
    }
    return text;
}

// An assistant's tool_calls: [{"id": ..., "type": "function", "function": {"name": ..., "arguments": ...}}],
// the arguments a JSON string (or, as some clients send them, an object).
std::vector<ToolCall> tool_calls_of(const json& m, size_t i) {
    const json* v = field(m, "tool_calls");
    if (!v) return {};
    const std::string name = "messages[" + std::to_string(i) + "].tool_calls";
    if (!v->is_array()) throw wrong_field(name, "an array of tool calls", *v);
    std::vector<ToolCall> calls;
    for (size_t k = 0; k < v->size(); ++k) {
        const std::string at = name + "[" + std::to_string(k) + "]";
        const json& c = (*v)[k];
        const json* f = c.is_object() ? field(c, "function") : nullptr;
        const json* fn = f && f->is_object() ? field(*f, "name") : nullptr;
        if (!fn || !fn->is_string())
            throw wrong_field(at, "a tool call {\"type\": \"function\", \"function\": {\"name\": ..., \"arguments\": ...}}", c);
        ToolCall call;
        call.name = fn->get<std::string>();
        if (const json* id = field(c, "id"); id && id->is_string()) call.id = id->get<std::string>();
        if (const json* a = field(*f, "arguments")) {
            if (a->is_string()) call.arguments = a->get<std::string>();
            else if (a->is_object()) call.arguments = a->dump(-1, ' ', false, json::error_handler_t::replace);
            else throw wrong_field(at + ".function.arguments", "a JSON string or an object", *a);
        }
        calls.push_back(std::move(call));
    }
    return calls;
}

std::vector<ChatMessage> chat_messages(const json& body) {
    const json* v = field(body, "messages");
    if (!v) throw invalid_request("missing_field", "messages is missing: a chat completion needs messages", "messages");
    if (!v->is_array() || v->empty()) throw wrong_field("messages", "a non-empty array of messages", *v);
    std::vector<ChatMessage> messages;
    for (size_t i = 0; i < v->size(); ++i) {
        const json& m = (*v)[i];
        if (!m.is_object()) throw wrong_field("messages[" + std::to_string(i) + "]", "an object with a role and content", m);
        ChatMessage msg;
        msg.role = role_of(m, i);
        if (msg.role == ChatRole::Assistant) msg.tool_calls = tool_calls_of(m, i);
        msg.content = content_of(m, i, msg.role);
        messages.push_back(std::move(msg));
    }
    return messages;
}

}  // namespace

ApiRequest parse_request(std::string_view body_text, Endpoint endpoint) {
    const char* begin = body_text.data();
    const char* end = begin + body_text.size();
    json body;
    try {
        check_request_depth(begin, end);
        body = json::parse(begin, end);
    } catch (const FormatError& e) {
        throw invalid_request("invalid_json", e.what());
    } catch (const json::exception& e) {
        std::string what = e.what();
        if (const size_t at = what.find("] "); what.rfind("[json.exception", 0) == 0 && at != std::string::npos)
            what.erase(0, at + 2);
        throw invalid_request("invalid_json", "the request body is malformed JSON: " + what);
    }
    if (!body.is_object()) throw invalid_request("invalid_json", "the request body must be a JSON object, not " + json_excerpt(body));
    ApiRequest r;
    r.endpoint = endpoint;
    if (const json* m = field(body, "model"); m && !m->is_string()) throw wrong_field("model", "a string", *m);
    r.n = integer_in(body, "n", 1, "from 1 to " + std::to_string(kMaxChoices), kMaxChoices).value_or(1);
    if (const json* f = field(body, "response_format")) {
        const json* type = f->is_object() ? field(*f, "type") : nullptr;
        if (!type || !type->is_string()) throw wrong_field("response_format", "an object with a type", *f);
        if (*type != "text")
            throw invalid_request("unsupported_value",
                                  "response_format " + json_excerpt(*type) +
                                      " is not supported: this server does not constrain replies to JSON (only \"text\")",
                                  "response_format");
    }
    r.logprobs = logprobs_asked(body, endpoint);
    if (const json* e = field(body, "echo"); e && endpoint == Endpoint::Completions) {
        if (!e->is_boolean()) throw wrong_field("echo", "true or false", *e);
        r.echo = e->get<bool>();
        if (r.echo && r.logprobs)
            throw invalid_request("unsupported_value",
                                  "echo with logprobs is not supported: this server gives no log-probabilities for the "
                                  "prompt's tokens",
                                  "echo");
    }
    if (const json* s = field(body, "stream")) {
        if (!s->is_boolean()) throw wrong_field("stream", "true or false", *s);
        r.stream = s->get<bool>();
    }
    if (const json* o = field(body, "stream_options")) {
        const json* u = o->is_object() ? field(*o, "include_usage") : nullptr;
        if (!o->is_object() || (u && !u->is_boolean()))
            throw wrong_field("stream_options", "an object whose include_usage is true or false", *o);
        r.include_usage = u && u->get<bool>();
    }
    r.sampling = sampling_fields(body);
    r.stop = stop_strings(body);
    if (endpoint == Endpoint::Completions) {
        r.prompt = prompt_text(body);
    } else {
        r.messages = chat_messages(body);
        r.tools = tools_offered(body);
    }
    return r;
}

std::vector<ChatMessage> with_default_system(std::vector<ChatMessage> messages, const std::string& system) {
    if (!system.empty() && (messages.empty() || messages.front().role != ChatRole::System))
        messages.insert(messages.begin(), {ChatRole::System, system, {}});
    return messages;
}

size_t text_bytes(const ApiRequest& request) {
    size_t n = request.prompt.size();
    for (const std::string& tool : request.tools) n += tool.size();
    for (const ChatMessage& m : request.messages) {
        n += m.content.size();
        for (const ToolCall& c : m.tool_calls) n += c.name.size() + c.arguments.size();
    }
    return n;
}

}  // namespace medusa::serve
