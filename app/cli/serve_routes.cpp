#include "serve_routes.h"

#include <httplib.h>

#include <strings.h>

#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>

#include "client_connection.h"
#include "openai_request.h"
#include "openai_response.h"

namespace medusa::cli {

namespace {

using httplib::Request;
using httplib::Response;
using serve::ApiError;
using serve::Endpoint;
using serve::JobEvent;

constexpr const char* kCompletions = "/v1/completions";
constexpr const char* kChatCompletions = "/v1/chat/completions";
// How often a stream whose request waits, or whose model is between steps, looks for its client.
constexpr auto kClientCheck = std::chrono::milliseconds(100);

void send_error(Response& res, const ApiError& e) {
    res.status = e.status;
    if (e.status == 503) res.set_header("Retry-After", "1");  // a slot frees within a reply's time
    res.set_content(serve::error_body(e), "application/json");
}

// Compares every byte whatever differs first: how long a wrong key takes says nothing of the right one.
bool same_text(const std::string& a, const std::string& b) {
    unsigned diff = a.size() != b.size();
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) diff |= unsigned(uint8_t(a[i]) ^ uint8_t(b[i]));
    return diff == 0;
}

ApiError route_error(const Request& req, int status) {
    switch (status) {
    case 404:
        return ApiError(404, "invalid_request_error", "not_found",
                        "no route " + req.method + " " + req.path + ": this server answers GET /health, GET /v1/models[/ID], "
                        "POST " + kCompletions + " and POST " + kChatCompletions);
    case 413:
        return ApiError(413, "invalid_request_error", "request_too_large",
                        "the request body is larger than " + std::to_string(serve::kMaxBodyBytes) + " bytes");
    case 400: return ApiError(400, "invalid_request_error", "malformed_request", "the HTTP request is malformed");
    case 408:
        return ApiError(408, "invalid_request_error", "request_timeout",
                        "the request body took longer than medusa serve --request-timeout allows");
    default:
        return ApiError(status, status >= 500 ? "server_error" : "invalid_request_error", "",
                        "the request failed with HTTP status " + std::to_string(status));
    }
}

void allow_origin(Response& res, const std::string& origin) {
    res.set_header("Access-Control-Allow-Origin", origin);
    res.set_header("Vary", "Origin");
}

}  // namespace

void ServeRoutes::install(httplib::Server& server) {
    server.set_payload_max_length(serve::kMaxBodyBytes);
    // A chunked body has no length to refuse it by: the generation routes read theirs within the
    // bound (below), every other route refuses one before reading it.
    server.set_pre_routing_handler([this](const Request& req, Response& res) {
        // A browser names the page's origin: one the policy does not allow gets nothing done.
        const std::string origin = req.get_header_value("Origin");
        if (!origin.empty() && !settings_.cors.allows(origin)) {
            res.set_header("Connection", "close");  // a body may be left unread
            send_error(res, ApiError(403, "invalid_request_error", "origin_not_allowed",
                                     "web pages of " + origin + " may not call this server (start medusa serve with --cors " +
                                         origin + " to allow them)"));
            return httplib::Server::HandlerResponse::Handled;
        }
        if (req.method == "OPTIONS") {  // a CORS preflight of an allowed origin (or none: a plain OPTIONS)
            res.status = 204;
            res.set_header("Allow", "GET, POST, OPTIONS");
            if (!origin.empty()) {
                allow_origin(res, origin);
                res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
                res.set_header("Access-Control-Allow-Headers", req.has_header("Access-Control-Request-Headers")
                                                                   ? req.get_header_value("Access-Control-Request-Headers")
                                                                   : "Authorization, Content-Type");
                res.set_header("Access-Control-Max-Age", "600");
            }
            return httplib::Server::HandlerResponse::Handled;
        }
        const bool generation = req.method == "POST" && (req.path == kCompletions || req.path == kChatCompletions);
        if (generation || !req.has_header("Transfer-Encoding")) {
            // Its headers are read (and a generation route bounds its body's time itself).
            deadlines_.answering(req.remote_addr, req.remote_port);
            return httplib::Server::HandlerResponse::Unhandled;
        }
        res.set_header("Connection", "close");  // the unread body must not be taken for a request
        send_error(res, ApiError(411, "invalid_request_error", "length_required", "a body needs a Content-Length here"));
        return httplib::Server::HandlerResponse::Handled;
    });
    // Every other reply to an allowed page says so, or its browser would not let the page read it.
    server.set_post_routing_handler([this](const Request& req, Response& res) {
        // A whole reply is about to be written (a stream's end is its releaser's to tell).
        if (res.get_header_value("Content-Type") != "text/event-stream") deadlines_.answered(req.remote_addr, req.remote_port);
        const std::string origin = req.get_header_value("Origin");
        if (!origin.empty() && settings_.cors.allows(origin) && !res.has_header("Access-Control-Allow-Origin"))
            allow_origin(res, origin);
    });
    server.Get("/health", [this](const Request&, Response& res) {
        const serve::RequestQueue::Counts c = queue_.counts();
        res.status = c.closed ? 503 : 200;
        res.set_content(nlohmann::json{{"status", c.closed ? "stopping" : "ok"},
                                       {"model", model_.name},
                                       {"running", c.running},
                                       {"waiting", c.waiting},
                                       {"slots", c.slots}}
                            .dump(),
                        "application/json");
    });
    server.Get("/v1/models", [this](const Request& req, Response& res) {
        try {
            authorize(req);
            res.set_content(serve::models_body(model_.name, std::time(nullptr)), "application/json");
        } catch (const ApiError& e) {
            send_error(res, e);
        }
    });
    server.Get("/v1/models/(.+)", [this](const Request& req, Response& res) {
        try {
            authorize(req);
            if (req.matches[1] != model_.name)
                throw ApiError(404, "invalid_request_error", "model_not_found",
                               "this server serves the model '" + model_.name + "' only");
            res.set_content(serve::model_body(model_.name, std::time(nullptr)), "application/json");
        } catch (const ApiError& e) {
            send_error(res, e);
        }
    });
    for (const auto& [path, endpoint] : {std::pair{kCompletions, Endpoint::Completions},
                                         std::pair{kChatCompletions, Endpoint::ChatCompletions}}) {
        const Endpoint ep = endpoint;
        server.Post(path, httplib::Server::HandlerWithContentReader(
                              [this, ep](const Request& req, Response& res, const httplib::ContentReader& read) {
                                  std::string body;
                                  bool too_large = false, too_slow = false;
                                  const auto deadline = std::chrono::steady_clock::now() + settings_.request_deadline;
                                  const bool whole = read([&](const char* data, size_t n) {
                                      too_large = body.size() + n > serve::kMaxBodyBytes;
                                      too_slow = std::chrono::steady_clock::now() > deadline;
                                      if (!too_large) body.append(data, n);
                                      return !too_large && !too_slow;
                                  });
                                  if (too_large || res.status == 413) send_error(res, route_error(req, 413));
                                  else if (too_slow) send_error(res, route_error(req, 408));
                                  else if (!whole) send_error(res, route_error(req, 400));
                                  else generation(ep, req, res, body);
                              }));
        // A request with no body at all reaches this one.
        server.Post(path, httplib::Server::Handler(
                              [this, ep](const Request& req, Response& res) { generation(ep, req, res, req.body); }));
    }
    // What the library answers itself (an unknown route, a malformed request) as OpenAI's JSON too.
    server.set_error_handler(httplib::Server::HandlerWithResponse([](const Request& req, Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        send_error(res, route_error(req, res.status));
        return httplib::Server::HandlerResponse::Handled;
    }));
    server.set_exception_handler([](const Request&, Response& res, std::exception_ptr ep) {
        std::string what = "unknown error";
        try {
            std::rethrow_exception(ep);
        } catch (const std::exception& e) {
            what = e.what();
        } catch (...) {
        }
        send_error(res, ApiError(500, "server_error", "", what));
    });
}

void ServeRoutes::authorize(const Request& req) const {
    if (settings_.api_key.empty()) return;
    if (!req.has_header("Authorization"))
        throw ApiError(401, "invalid_request_error", "invalid_api_key",
                       "this server needs an API key: send the header Authorization: Bearer KEY");
    // The scheme's name is case-insensitive (RFC 9110): "bearer KEY" is as good as "Bearer KEY".
    std::string given = req.get_header_value("Authorization");
    if (given.size() >= 7 && strncasecmp(given.c_str(), "bearer ", 7) == 0) given.replace(0, 7, "Bearer ");
    if (!same_text(given, "Bearer " + settings_.api_key))
        throw ApiError(401, "invalid_request_error", "invalid_api_key", "the API key is not this server's");
}

void ServeRoutes::generation(Endpoint endpoint, const Request& req, Response& res, const std::string& body) {
    try {
        authorize(req);
        const serve::ApiRequest request = serve::parse_request(body, endpoint);
        const int id = ++next_id_;
        const auto job = make_job(request, model_, id);
        if (!queue_.admit(job)) {
            if (const auto why = queue_.closed_because()) throw *why;
            const int slots = queue_.counts().slots;
            throw ApiError(503, "server_error", "server_busy",
                           "the server already holds " + std::to_string(slots) + " request" + (slots == 1 ? "" : "s") +
                               " (medusa serve --parallel " + std::to_string(slots) + "): try again later");
        }
        const serve::ReplyHeader h{.id = (endpoint == Endpoint::ChatCompletions ? "chatcmpl-" : "cmpl-") + std::to_string(id),
                                   .created = std::time(nullptr),
                                   .model = model_.name,
                                   .endpoint = endpoint,
                                   .include_usage = request.include_usage,
                                   .choices = request.n,
                                   .logprobs = request.logprobs.has_value(),
                                   .echo = request.echo ? request.prompt : "",
                                   .tools = !request.tools.empty()};
        if (request.stream) stream_reply(job, h, req, res);
        else whole_reply(job, h, req, res);
    } catch (const ApiError& e) {
        send_error(res, e);
    }
}

void ServeRoutes::whole_reply(const std::shared_ptr<serve::GenerationJob>& job, const serve::ReplyHeader& h,
                              const Request& req, Response& res) {
    // Nothing is written until the reply is whole, so the client's socket says whether it left.
    const auto client = serve::ClientConnection::find(req.remote_addr, req.remote_port);
    std::vector<serve::ReplyChoice> choices(size_t(h.choices));
    auto checked = std::chrono::steady_clock::now();
    for (;;) {
        std::optional<JobEvent> e = job->receive(kClientCheck);
        if (const auto now = std::chrono::steady_clock::now(); now - checked >= kClientCheck) {
            checked = now;
            if (client && client->gone()) {
                job->cancel();  // decoding ends after its current step; nobody reads the reply
                return;
            }
        }
        if (!e) continue;
        serve::ReplyChoice& c = choices.at(size_t(e->choice));
        switch (e->kind) {
        case JobEvent::Kind::Text:
            c.text += e->text;
            c.tokens.insert(c.tokens.end(), e->tokens.begin(), e->tokens.end());
            break;
        case JobEvent::Kind::Done:
            c.finish = e->finish;
            serve::take_tool_calls(h, e->choice, c);
            if (e->choice + 1 < h.choices) break;
            res.set_content(serve::reply_body(h, choices, e->stats), "application/json");
            return;
        case JobEvent::Kind::Failed: throw *e->error;
        }
    }
}

void ServeRoutes::stream_reply(const std::shared_ptr<serve::GenerationJob>& job, const serve::ReplyHeader& h,
                               const Request& req, Response& res) {
    ++open_streams_;
    res.set_header("Cache-Control", "no-cache");
    auto opened = std::make_shared<bool>(false);
    auto offset = std::make_shared<size_t>(h.echo.size());  // where the next piece starts in its choice's text
    // With tools offered, a choice's text is held back until it ends: its tool calls are known then.
    auto held = std::make_shared<serve::ReplyChoice>();
    res.set_chunked_content_provider(
        "text/event-stream",
        // Called again and again until done(): each call sends at most one event. A write that
        // fails, or a client found gone, cancels the generation.
        [job, h, opened, offset, held](size_t, httplib::DataSink& sink) {
            auto send = [&](const std::string& text) {
                if (text.empty()) return true;  // an empty write would end the stream
                if (sink.is_writable() && sink.write(text.data(), text.size())) return true;
                job->cancel();
                return false;
            };
            if (!*opened) {
                *opened = true;
                return send(serve::opening_event(h));
            }
            std::optional<JobEvent> e = job->receive(kClientCheck);
            if (!e) {
                if (sink.is_writable()) return true;
                job->cancel();
                return false;
            }
            switch (e->kind) {
            case JobEvent::Kind::Text: {
                if (h.tools) {
                    held->text += e->text;
                    held->tokens.insert(held->tokens.end(), e->tokens.begin(), e->tokens.end());
                    return true;
                }
                const size_t at = *offset;
                for (const serve::TokenLogprobText& t : e->tokens) *offset += t.text.size();
                return send(serve::text_event(h, e->choice, e->text, e->tokens, at));
            }
            case JobEvent::Kind::Done:
                *offset = h.echo.size();
                if (h.tools) {
                    held->finish = e->finish;
                    serve::take_tool_calls(h, e->choice, *held);
                    e->finish = held->finish;
                    const std::string text = serve::held_reply_events(h, e->choice, *held);
                    *held = {};
                    if (!send(text)) return false;
                }
                if (e->choice + 1 < h.choices) return send(serve::finish_event(h, e->choice, e->finish));
                if (!send(serve::closing_events(h, e->choice, e->finish, e->stats))) return false;
                break;
            case JobEvent::Kind::Failed:
                if (!send(serve::error_event(*e->error))) return false;
                break;
            }
            sink.done();
            return true;
        },
        [this, job, address = req.remote_addr, port = req.remote_port](bool success) {
            if (!success) job->cancel();
            deadlines_.answered(address, port);
            --open_streams_;
        });
}

}  // namespace medusa::cli
