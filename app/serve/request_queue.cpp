#include "request_queue.h"

namespace medusa::serve {

JobEvent JobEvent::piece(int choice, std::string text, std::vector<TokenLogprobText> tokens) {
    JobEvent e;
    e.choice = choice;
    e.text = std::move(text);
    e.tokens = std::move(tokens);
    return e;
}

JobEvent JobEvent::done(int choice, FinishReason finish, ReplyStats stats) {
    JobEvent e;
    e.kind = Kind::Done;
    e.choice = choice;
    e.finish = finish;
    e.stats = std::move(stats);
    return e;
}

JobEvent JobEvent::failed(const ApiError& error) {
    JobEvent e;
    e.kind = Kind::Failed;
    e.error = error;
    return e;
}

void GenerationJob::send(JobEvent e) {
    {
        std::lock_guard lock(mutex_);
        events_.push_back(std::move(e));
    }
    ready_.notify_all();
}

std::optional<JobEvent> GenerationJob::receive(std::chrono::milliseconds wait) {
    std::unique_lock lock(mutex_);
    if (!ready_.wait_for(lock, wait, [&] { return !events_.empty(); })) return std::nullopt;
    JobEvent e = std::move(events_.front());
    events_.pop_front();
    return e;
}

bool RequestQueue::admit(std::shared_ptr<GenerationJob> job) {
    {
        std::lock_guard lock(mutex_);
        if (closed_ || int(waiting_.size()) + (running_ ? 1 : 0) >= slots_) return false;
        waiting_.push_back(std::move(job));
    }
    work_.notify_one();
    return true;
}

std::shared_ptr<GenerationJob> RequestQueue::take() {
    std::unique_lock lock(mutex_);
    work_.wait(lock, [&] { return closed_ || !waiting_.empty(); });
    if (closed_) return nullptr;
    running_ = std::move(waiting_.front());
    waiting_.pop_front();
    return running_;
}

void RequestQueue::finished() {
    std::lock_guard lock(mutex_);
    running_.reset();
}

void RequestQueue::close(const ApiError& why) {
    std::deque<std::shared_ptr<GenerationJob>> dropped;
    {
        std::lock_guard lock(mutex_);
        if (closed_) return;
        closed_ = why;
        dropped.swap(waiting_);
        if (running_) running_->cancel();
    }
    work_.notify_all();
    for (const auto& job : dropped) job->send(JobEvent::failed(why));
}

std::optional<ApiError> RequestQueue::closed_because() const {
    std::lock_guard lock(mutex_);
    return closed_;
}

RequestQueue::Counts RequestQueue::counts() const {
    std::lock_guard lock(mutex_);
    return {.running = running_ ? 1 : 0, .waiting = int(waiting_.size()), .slots = slots_, .closed = closed_.has_value()};
}

}  // namespace medusa::serve
