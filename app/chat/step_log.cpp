#include "step_log.h"

namespace medusa::chat {

int StepLog::begin_turn(std::string prompt, std::string mode, DrafterKind drafter, bool chat) {
    std::lock_guard lock(mutex_);
    TurnRecord t;
    t.id = next_turn_++;
    t.prompt = std::move(prompt);
    t.mode = std::move(mode);
    t.drafter = drafter;
    t.chat = chat;
    if (carried_prompt_ == t.prompt) t.other_replies = std::move(carried_replies_);
    carried_prompt_.clear(), carried_replies_.clear();
    turns_.push_back(std::move(t));
    return turns_.back().id;
}

void drop_step_details(StepRecord& r) {
    if (r.details_dropped) return;
    r.dropped_nodes = int(r.trace.nodes.size());
    r.details_dropped = true;
    std::vector<TreeNodeTrace>().swap(r.trace.nodes);  // swap, not clear: the memory must go
    std::vector<int>().swap(r.trace.path);
    std::vector<std::pair<std::string, double>>().swap(r.trace.stage_ms);
    r.trace.control.reset();  // the shapes weighed: the drafter chosen stays in trace.drafter
    std::vector<std::string>().swap(r.node_text);
    std::vector<std::string>().swap(r.greedy_text);
    std::vector<RejectionBar>().swap(r.trace.rejection);
    std::vector<std::string>().swap(r.rejection_text);
}

void StepLog::append(StepRecord record) {
    std::lock_guard lock(mutex_);
    steps_.push_back(std::move(record));
    if (steps_.size() > kDetailedSteps) drop_step_details(steps_[steps_.size() - kDetailedSteps - 1]);
}

void StepLog::end_turn(int id, StopReason stop_reason, int new_tokens, int steps, double decode_ms, double prefill_ms) {
    std::lock_guard lock(mutex_);
    for (auto& t : turns_)
        if (t.id == id) {
            t.done = true;
            t.stop_reason = stop_reason;
            t.new_tokens = new_tokens;
            t.steps = steps;
            t.decode_ms = decode_ms;
            t.prefill_ms = prefill_ms;
        }
}

void StepLog::clear() {
    std::lock_guard lock(mutex_);
    ++epoch_;
    steps_.clear();
    turns_.clear();
    carried_prompt_.clear(), carried_replies_.clear();
    next_turn_ = 1;  // a new conversation counts its turns from 1
}

void StepLog::restore(std::vector<TurnRecord> turns) {
    std::lock_guard lock(mutex_);
    ++epoch_;
    steps_.clear();
    turns_ = std::move(turns);
    next_turn_ = 1;
    for (TurnRecord& t : turns_) t.id = next_turn_++, t.done = true, t.restored = true;
}

bool StepLog::drop_last_turn() {
    std::lock_guard lock(mutex_);
    if (turns_.empty() || !turns_.back().done) return false;
    const int id = turns_.back().id;
    turns_.pop_back();
    std::erase_if(steps_, [&](const StepRecord& r) { return r.turn == id; });
    next_turn_ = id;
    ++epoch_;  // readers start over from what is left
    return true;
}

void StepLog::carry_replies(std::string prompt, std::vector<std::string> replies) {
    std::lock_guard lock(mutex_);
    carried_prompt_ = std::move(prompt);
    carried_replies_ = std::move(replies);
}

void StepLog::show_reply(int turn_id, int which) {
    std::lock_guard lock(mutex_);
    for (TurnRecord& t : turns_)
        if (t.id == turn_id && which >= -1 && which < int(t.other_replies.size())) t.shown_reply = which;
    ++epoch_;  // readers lay the conversation out again
}

void StepLog::leave_out_before(int turn_id) {
    std::lock_guard lock(mutex_);
    for (TurnRecord& t : turns_) t.left_out = t.left_out || t.id < turn_id;
    ++epoch_;  // readers lay the conversation out again
}

StepLog::Snapshot StepLog::read(size_t from) const {
    std::lock_guard lock(mutex_);
    Snapshot s;
    s.epoch = epoch_;
    if (from < steps_.size()) s.steps.assign(steps_.begin() + long(from), steps_.end());
    s.turns = turns_;
    return s;
}

size_t StepLog::size() const {
    std::lock_guard lock(mutex_);
    return steps_.size();
}

uint64_t StepLog::epoch() const {
    std::lock_guard lock(mutex_);
    return epoch_;
}

}  // namespace medusa::chat

namespace medusa::chat {

bool StepLogReader::poll(const StepLog& log) {
    StepLog::Snapshot s = log.read(steps_.size());
    bool changed = false;
    if (s.epoch != epoch_) {
        // Cleared since the last poll: what we hold is stale and `from` was wrong, so start over.
        epoch_ = s.epoch;
        steps_.clear();
        s = log.read(0);
        epoch_ = s.epoch;
        changed = true;
    }
    changed = changed || !s.steps.empty() || s.turns.size() != turns_.size();
    if (!changed)
        for (size_t i = 0; i < turns_.size() && !changed; ++i) changed = turns_[i].done != s.turns[i].done;
    for (auto& r : s.steps) steps_.push_back(std::move(r));
    for (size_t i = steps_.size() > kDetailedSteps ? steps_.size() - kDetailedSteps : 0; i-- > 0 && !steps_[i].details_dropped;)
        drop_step_details(steps_[i]);
    turns_ = std::move(s.turns);
    return changed;
}

}  // namespace medusa::chat
