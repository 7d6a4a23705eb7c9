#include "request_deadlines.h"

#include <vector>

#include "client_connection.h"

namespace medusa::serve {

namespace {

std::string key_of(const std::string& address, int port) { return address + " " + std::to_string(port); }

}  // namespace

RequestDeadlines::RequestDeadlines(std::chrono::milliseconds limit, std::function<void(const std::string&)> dropped)
    : limit_(limit), dropped_(std::move(dropped)), watcher_([this] { watch(); }) {}

RequestDeadlines::~RequestDeadlines() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    watcher_.join();
}

void RequestDeadlines::answering(const std::string& address, int port) {
    std::lock_guard lock(mutex_);
    answering_.insert(key_of(address, port));
}

void RequestDeadlines::answered(const std::string& address, int port) {
    std::lock_guard lock(mutex_);
    const std::string key = key_of(address, port);
    if (const auto it = answering_.find(key); it != answering_.end()) answering_.erase(it);
    since_[key] = Clock::now();
}

void RequestDeadlines::watch() {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(500), [&] { return stopping_; })) {
        lock.unlock();
        const std::vector<ClientConnection> connections = ClientConnection::all();
        lock.lock();
        const Clock::time_point now = Clock::now();
        std::map<std::string, Clock::time_point> seen;
        for (const ClientConnection& c : connections) {
            const std::string key = key_of(c.address(), c.port());
            const auto it = since_.find(key);
            const Clock::time_point since = it == since_.end() ? now : it->second;
            seen[key] = since;
            if (answering_.count(key) || now - since <= limit_) continue;
            c.shut_down();  // its thread's read fails, and the library closes the socket
            seen.erase(key);
            if (dropped_) dropped_(c.address() + ":" + std::to_string(c.port()));
        }
        since_ = std::move(seen);  // forgets the connections that have closed
    }
}

}  // namespace medusa::serve
