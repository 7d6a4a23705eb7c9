// The HTTP face of `medusa serve` (cpp-httplib): GET /health and /v1/models, POST /v1/completions
// and /v1/chat/completions, whole or streamed as server-sent events, and every error as OpenAI's
// JSON: 400 for a bad request, 401 for a missing or wrong key, 403 for a web page of an origin
// the CORS policy does not allow, 404 for an unknown route, 413 for a body over
// serve::kMaxBodyBytes, 503 when the queue is full or the server is stopping. CORS preflights
// (OPTIONS) are answered for the origins the policy allows.
#pragma once
#include <atomic>
#include <chrono>
#include <string>

#include "cors_policy.h"
#include "request_deadlines.h"
#include "request_queue.h"
#include "served_model.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace medusa::cli {

struct ServeSettings {
    std::string api_key;  // empty: no key asked for
    serve::CorsPolicy cors;  // the web pages that may call it (this machine's, unless --cors says more)
    std::chrono::milliseconds request_deadline{30000};  // to send a whole request, headers and body
};

class ServeRoutes {
public:
    ServeRoutes(ServedModel& model, serve::RequestQueue& queue, serve::RequestDeadlines& deadlines, ServeSettings settings)
        : model_(model), queue_(queue), deadlines_(deadlines), settings_(std::move(settings)) {}
    void install(httplib::Server& server);
    // Streams still being written: a stopping server lets them send their last event first.
    int open_streams() const { return open_streams_; }

private:
    void generation(serve::Endpoint endpoint, const httplib::Request& req, httplib::Response& res, const std::string& body);
    void authorize(const httplib::Request& req) const;
    void whole_reply(const std::shared_ptr<serve::GenerationJob>& job, const serve::ReplyHeader& h,
                     const httplib::Request& req, httplib::Response& res);
    void stream_reply(const std::shared_ptr<serve::GenerationJob>& job, const serve::ReplyHeader& h,
                      const httplib::Request& req, httplib::Response& res);

    ServedModel& model_;
    serve::RequestQueue& queue_;
    serve::RequestDeadlines& deadlines_;
    const ServeSettings settings_;
    std::atomic<int> next_id_{0};
    std::atomic<int> open_streams_{0};
};

}  // namespace medusa::cli
