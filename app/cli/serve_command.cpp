// `medusa serve`: a local OpenAI-compatible HTTP server. The model, tokenizer, engine and drafter
// are built from generate's flags as generate builds them, so a request at temperature 0 gets the
// text `medusa generate` prints for the same prompt and flags. One thread decodes, one request at
// a time; HTTP threads read requests, queue them and send what the decoding thread produces.
#include <httplib.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <thread>

#include "commands.h"
#include "interrupt.h"
#include "serve_routes.h"
#include "served_model.h"

namespace medusa::cli {

namespace {

// After SIGINT/SIGTERM: no request is taken any more, the running one stops after its step and
// each gets a 503 (a stream its last event), then the server closes.
void stop_when_asked(httplib::Server& server, serve::RequestQueue& queue, std::thread& decoding, const ServeRoutes& routes,
                     const std::atomic<bool>& listening) {
    using namespace std::chrono_literals;
    while (!interrupt_requested() && listening) std::this_thread::sleep_for(50ms);
    queue.close(serve::ApiError(503, "server_error", "shutting_down", "the server is stopping"));
    decoding.join();
    // A client that stopped reading must not hold the exit up for long.
    for (int i = 0; i < 50 && routes.open_streams() > 0; ++i) std::this_thread::sleep_for(100ms);
    while (listening && !server.is_running()) std::this_thread::sleep_for(10ms);
    if (listening) server.stop();
}

// --cors ORIGIN[,ORIGIN...] or '*': the web pages besides this machine's that may call the server.
serve::CorsPolicy cors_policy(const Args& args) {
    std::vector<std::string> origins;
    if (args.has("--cors")) {
        const std::string list = args.str("--cors");
        for (size_t at = 0; at <= list.size();) {
            const size_t comma = std::min(list.find(',', at), list.size());
            origins.push_back(list.substr(at, comma - at));
            at = comma + 1;
        }
    }
    try {
        return serve::CorsPolicy(origins);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
}

// Connections still sending their request (slow or idle clients) beside which the server keeps
// answering: each holds a thread until it is done or silent for the read timeout.
constexpr size_t kSlowConnections = 64;

}  // namespace

int run_serve(int argc, char** argv) {
    Args args(argc, argv, 2, flags_of("serve"));
    if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional().front() + "'");
    const std::string host = args.str("--host", "127.0.0.1");
    const int port = args.integer("--port", 8080);
    if (port < 0 || port > 65535) throw UsageError("--port must be in 0..65535 (0: a free port), got " + std::to_string(port));
    const int slots = args.integer("--parallel", 8);
    if (slots < 1 || slots > 256) throw UsageError("--parallel must be in 1..256, got " + std::to_string(slots));
    if (args.has("--api-key") && args.str("--api-key").empty()) throw UsageError("--api-key must not be empty");
    const bool log = !args.has("--quiet");

    const float timeout = args.number("--request-timeout", 30);
    if (!(timeout >= 0.5 && timeout <= 3600))
        throw UsageError("--request-timeout must be in 0.5..3600 seconds, got " + args.str("--request-timeout"));
    const auto deadline = std::chrono::milliseconds(long(timeout * 1000));
    const serve::CorsPolicy cors = cors_policy(args);  // before the model loads: a bad flag fails at once
    ServedModel model(args);
    serve::RequestQueue queue(slots);
    serve::RequestDeadlines deadlines(deadline, [log](const std::string& peer) {
        if (log) std::fprintf(stderr, "medusa serve: dropped %s: its request took longer than --request-timeout\n", peer.c_str());
    });
    ServeRoutes routes(model, queue, deadlines, {.api_key = args.str("--api-key", ""), .cors = cors, .request_deadline = deadline});
    httplib::Server server;
    // Each held request keeps an HTTP thread waiting for it, and so does each connection still
    // sending its request (a slow or idle client): threads for 64 of those beside the held requests
    // keep /health and the queue answering. A thread waiting on a socket costs no CPU.
    server.new_task_queue = [slots] { return new httplib::ThreadPool(size_t(slots) + 4 + kSlowConnections); };
    // A client silent this long between two reads of its request is dropped (httplib's default is 5 s).
    server.set_read_timeout(3);
    server.set_keep_alive_timeout(2);  // an idle connection holds a thread, and the exit, this long
    routes.install(server);
    const int bound = port == 0 ? server.bind_to_any_port(host) : server.bind_to_port(host, port) ? port : -1;
    if (bound < 0) throw std::runtime_error("cannot listen on " + host + ":" + std::to_string(port) + ": " + std::strerror(errno));
    std::signal(SIGPIPE, SIG_IGN);  // a client gone mid-reply is a failed write, not the end of the server

    const InterruptScope interrupt;
    std::thread decoding([&] {
        while (const auto job = queue.take()) {
            decode_job(*job, model, queue, log);
            queue.finished();
        }
    });
    std::atomic<bool> listening{true};
    std::thread stopper([&] { stop_when_asked(server, queue, decoding, routes, listening); });
    std::fprintf(stderr, "medusa serve: listening on http://%s:%d (%s: %s, %s; one request decoded at a time, %d held)\n",
                 host.c_str(), bound, model.name.c_str(), model.drafting.summary.c_str(),
                 model.chat.kind == ChatTemplate::None ? "no chat template" : chat_template_name(model.chat.kind), slots);
    server.listen_after_bind();
    listening = false;
    stopper.join();
    if (model.engine.validation_messages() > 0) {
        std::fprintf(stderr, "error: %d Vulkan validation message(s)\n", model.engine.validation_messages());
        return 3;
    }
    if (!interrupt_requested()) {
        std::fprintf(stderr, "medusa serve: error: the server stopped listening on %s:%d\n", host.c_str(), bound);
        return 1;
    }
    if (log) std::fprintf(stderr, "medusa serve: stopped\n");
    return 0;
}

}  // namespace medusa::cli
