// A bound on how long a client may take to send its request, headers and body: the HTTP library
// only bounds each read (a client that sends a byte every few seconds would hold a thread for as
// long as it likes), so a watcher looks at every connection twice a second and shuts down one
// that has been sending its request for longer than the deadline. A connection being answered
// (from its request read to its reply written) has no deadline; when its reply is written, the
// next request's time starts.
#pragma once
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

namespace medusa::serve {

class RequestDeadlines {
public:
    using Clock = std::chrono::steady_clock;
    // `dropped` hears of each connection shut down (for the server's log).
    RequestDeadlines(std::chrono::milliseconds limit, std::function<void(const std::string& peer)> dropped);
    ~RequestDeadlines();
    RequestDeadlines(const RequestDeadlines&) = delete;
    RequestDeadlines& operator=(const RequestDeadlines&) = delete;

    // The client at address:port sent its whole request, and is being answered.
    void answering(const std::string& address, int port);
    // Its reply is written: the time for its next request starts now.
    void answered(const std::string& address, int port);

private:
    void watch();
    const std::chrono::milliseconds limit_;
    const std::function<void(const std::string&)> dropped_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::multiset<std::string> answering_;            // "address port", once per reply in progress
    std::map<std::string, Clock::time_point> since_;  // when each connection began sending its request
    std::thread watcher_;
};

}  // namespace medusa::serve
