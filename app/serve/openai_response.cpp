#include "openai_response.h"

#include <nlohmann/json.hpp>

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

// One choice: a completion's text, a chat reply's message, or a chunk's delta of either.
json choice(const ReplyHeader& h, const std::string& text, const json& finish, bool chunk) {
    json c = {{"index", 0}};
    if (!chat(h)) c["text"] = text, c["logprobs"] = nullptr;
    else if (chunk) c["delta"] = text.empty() ? json::object() : json{{"content", text}};
    else c["message"] = {{"role", "assistant"}, {"content", text}};
    c["finish_reason"] = finish;
    return c;
}

}  // namespace

const char* finish_reason_name(FinishReason r) { return r == FinishReason::Stop ? "stop" : "length"; }

std::string error_body(const ApiError& e) {
    return text_of({{"error",
                     {{"message", e.what()},
                      {"type", e.type},
                      {"param", e.param.empty() ? json(nullptr) : json(e.param)},
                      {"code", e.code.empty() ? json(nullptr) : json(e.code)}}}});
}

std::string reply_body(const ReplyHeader& h, const std::string& text, FinishReason finish, const ReplyStats& stats) {
    json j = header_fields(h, false);
    j["choices"] = json::array({choice(h, text, finish_reason_name(finish), false)});
    j["usage"] = usage(stats.generation);
    j["speculative"] = speculative(stats);
    return text_of(j);
}

std::string opening_event(const ReplyHeader& h) {
    if (!chat(h)) return "";
    json j = header_fields(h, true);
    j["choices"] = json::array({{{"index", 0}, {"delta", {{"role", "assistant"}, {"content", ""}}}, {"finish_reason", nullptr}}});
    return event(j);
}

std::string text_event(const ReplyHeader& h, const std::string& text) {
    json j = header_fields(h, true);
    j["choices"] = json::array({choice(h, text, nullptr, true)});
    return event(j);
}

std::string closing_events(const ReplyHeader& h, FinishReason finish, const ReplyStats& stats) {
    json j = header_fields(h, true);
    j["choices"] = json::array({choice(h, "", finish_reason_name(finish), true)});
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
