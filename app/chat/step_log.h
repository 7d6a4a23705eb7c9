// The hand-over between the decoding thread and the UI: the worker appends what happened (turns
// and steps), the UI copies out everything after the last entry it has seen. Nothing is shared
// by reference, so the UI never reads a record the worker is still writing.
#pragma once
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "decode/step_trace.h"

namespace medusa::chat {

// How a step's candidates are drawn: as a tree by depth (Medusa heads, n-gram tries, draft trees;
// also plain decoding's lone root) or as a draft model's chain (node d is the draft's d-th
// token, draft_prob its q, model_prob p).
enum class StepSource { Medusa, Draft };

// One decoding step with the text of its tokens (decoded on the worker: the tokenizer stays there).
struct StepRecord {
    int turn = 0;
    StepTrace trace;
    StepSource source = StepSource::Medusa;
    bool sampled = false;  // the drafts were sampled (q and p decided) rather than chosen deterministically
    std::vector<std::string> node_text;     // per tree node
    std::vector<std::string> greedy_text;   // per tree node: the model's own choice at its parent (greedy rule)
    std::vector<std::string> emitted_text;  // per emitted token
    std::string bonus_text;
    std::vector<std::string> rejection_text;  // per trace.rejection bar: its token's text
    bool controlled = false;  // the step controller shaped it (trace.control, which goes with the details)
    double t_ms = 0;  // since the turn's first step began (prefill and pauses excluded)
    // Past the last kDetailedSteps steps a record keeps only what the chat text, the timeline and
    // the metrics read: a long session would otherwise hold every tree it ever drew.
    bool details_dropped = false;
    int dropped_nodes = 0;  // the tree's size before its details went
    int node_count() const { return details_dropped ? dropped_nodes : int(trace.nodes.size()); }
};

// How many of the latest steps keep their trees, texts per node and stage times.
constexpr size_t kDetailedSteps = 1000;
void drop_step_details(StepRecord& r);

struct TurnRecord {
    int id = 0;
    std::string prompt;
    std::string mode;  // describe() of its spec: "medusa (mc_sim_7b_63, 4 heads, greedy)" ...
    DrafterKind drafter = DrafterKind::Plain;
    bool done = false;
    StopReason stop_reason = StopReason::Length;  // once done
    int new_tokens = 0;
    int steps = 0;  // verify passes of the target
    double decode_ms = 0;   // from the first step to the last (pauses left out)
    double prefill_ms = 0;  // the prompt and first-use setup before the first step
    bool chat = false;  // a chat model's turn: a message and its reply (else a story and its continuation)
    // A turn reopened from a saved chat (chat_file.h): its reply as text, its steps not kept.
    bool restored = false;
    std::string saved_reply;
    // Left out of the model's context at the user's word (the conversation outgrew it): still
    // shown, no longer given to the model.
    bool left_out = false;
    // Replies Regenerate replaced, oldest first, and the one shown in place of the turn's own
    // (-1: its own): the chat flips between them, and the one shown is the history the model gets.
    std::vector<std::string> other_replies;
    int shown_reply = -1;
};

class StepLog {
public:
    struct Snapshot {
        uint64_t epoch = 0;               // changes on clear(): the reader must drop what it has
        std::vector<StepRecord> steps;    // the steps after `from`
        std::vector<TurnRecord> turns;    // all turns (few, small)
    };

    int begin_turn(std::string prompt, std::string mode, DrafterKind drafter, bool chat = false);
    void append(StepRecord record);
    void end_turn(int id, StopReason stop_reason, int new_tokens, int steps, double decode_ms, double prefill_ms = 0);
    void clear();
    // A new conversation holding these finished turns (a reopened chat), numbered from 1.
    void restore(std::vector<TurnRecord> turns);
    // Forgets the last turn and its steps (Regenerate replaces the last reply): false when there
    // is none or it is still being decoded.
    bool drop_last_turn();
    // The turns before `turn_id` are left out of the model's context from now on.
    void leave_out_before(int turn_id);
    // The next turn begun for `prompt` keeps these replies as its earlier ones (Regenerate).
    void carry_replies(std::string prompt, std::vector<std::string> replies);
    // Which reply of a turn is shown (-1: its own, else an index into its other_replies).
    void show_reply(int turn_id, int which);

    // Steps with index >= from (of the current epoch); a reader passes the count it already holds.
    Snapshot read(size_t from) const;
    size_t size() const;
    uint64_t epoch() const;

private:
    mutable std::mutex mutex_;
    uint64_t epoch_ = 0;
    int next_turn_ = 1;
    std::vector<StepRecord> steps_;
    std::vector<TurnRecord> turns_;
    std::string carried_prompt_;
    std::vector<std::string> carried_replies_;
};

}  // namespace medusa::chat

namespace medusa::chat {

// The UI side: keeps its own copy and pulls only the new steps each frame.
class StepLogReader {
public:
    // Returns true when anything changed (new steps, turn updates, or a clear). Steps before the
    // last kDetailedSteps lose their details, as in the log.
    bool poll(const StepLog& log);
    const std::vector<StepRecord>& steps() const { return steps_; }
    const std::vector<TurnRecord>& turns() const { return turns_; }
    // Changes whenever turns are cleared, restored, dropped or left out: within one epoch a turn's
    // prompt never changes and steps are only appended.
    uint64_t epoch() const { return epoch_; }

private:
    uint64_t epoch_ = 0;
    std::vector<StepRecord> steps_;
    std::vector<TurnRecord> turns_;
};

}  // namespace medusa::chat
