// Requests wait here for the one decoding thread: the engine decodes one sequence at a time on
// one device, so `slots` requests are held at once (one decoding, the rest waiting in arrival
// order) and one more is refused. Each request's generation is a GenerationJob, between the HTTP
// handler that reads its events and the decoding thread that sends them.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "setup/decoding_spec.h"
#include "openai_response.h"

namespace medusa::serve {

// A job's choices come one after another: each sends its text, then Done; Failed ends the job.
struct JobEvent {
    enum class Kind { Text, Done, Failed };
    Kind kind = Kind::Text;
    int choice = 0;                       // Text, Done: of which choice
    std::string text;                     // Text: the next piece of the reply
    std::vector<TokenLogprobText> tokens;  // Text: the tokens it came from, when logprobs were asked for
    FinishReason finish{};                // Done
    ReplyStats stats;                     // Done: of every choice so far
    std::optional<ApiError> error;        // Failed

    static JobEvent piece(int choice, std::string text, std::vector<TokenLogprobText> tokens = {});
    static JobEvent done(int choice, FinishReason finish, ReplyStats stats);
    static JobEvent failed(const ApiError& error);
};

class GenerationJob {
public:
    int id = 0;
    Endpoint endpoint = Endpoint::Completions;
    std::vector<int> prompt;  // BOS first where the model wants one
    DecodingSpec spec;        // the server's flags with the request's fields
    std::vector<int> stop_tokens;
    std::vector<std::string> stop_strings;
    int choices = 1;    // n
    int logprobs = -1;  // each token's log-probability and this many likeliest; -1: none

    void send(JobEvent e);
    // The next event, or nothing when `wait` passes without one.
    std::optional<JobEvent> receive(std::chrono::milliseconds wait);
    // The client went away, or the server is stopping: decoding ends after its current step.
    void cancel() { cancelled_ = true; }
    bool cancelled() const { return cancelled_; }

private:
    std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<JobEvent> events_;
    std::atomic<bool> cancelled_{false};
};

class RequestQueue {
public:
    explicit RequestQueue(int slots) : slots_(slots) {}
    // Holds the job when fewer than `slots` are held and the queue is open; false otherwise.
    bool admit(std::shared_ptr<GenerationJob> job);
    // The decoding thread's next job, the oldest waiting; blocks; nullptr once the queue is closed.
    std::shared_ptr<GenerationJob> take();
    // The job taken last has ended: its slot is free.
    void finished();
    // Admits no more: each waiting job gets `why` as its event, the running one is cancelled (its
    // decoding thread sends it `why`: see closed_because()).
    void close(const ApiError& why);
    std::optional<ApiError> closed_because() const;

    struct Counts {
        int running = 0, waiting = 0, slots = 0;
        bool closed = false;
    };
    Counts counts() const;

private:
    const int slots_;
    mutable std::mutex mutex_;
    std::condition_variable work_;
    std::deque<std::shared_ptr<GenerationJob>> waiting_;
    std::shared_ptr<GenerationJob> running_;
    std::optional<ApiError> closed_;
};

}  // namespace medusa::serve
