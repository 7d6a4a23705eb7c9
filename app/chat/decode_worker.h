// Decoding on its own thread: loads the model, tokenizer and the drafter the settings' spec names
// (build_drafting: Medusa heads and tree, a draft model, n-gram lookup, EAGLE's layer, or none),
// runs the speculative decoder and appends every step to the StepLog. The UI thread only calls the
// small control methods below, which never wait for the GPU.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "companion_fit.h"
#include "decode_settings.h"
#include "gpu/context.h"
#include "setup/drafting.h"
#include "model/chat_template.h"
#include "step_log.h"

namespace medusa::chat {

// "Measure speedup vs plain": the same prompt decoded on the worker with the settings' mode and
// with plain decoding, for the same number of new tokens, best of kRounds each. Nothing enters the chat.
struct SpeedupResult {
    static constexpr int kRounds = 3;  // each mode runs this often, alternating; the fastest run counts
    bool valid = false;
    std::string mode;        // the settings' mode_name()
    DrafterKind drafter = DrafterKind::Plain;
    int tokens = 0, plain_tokens = 0;
    double tokens_per_s = 0, plain_tokens_per_s = 0;
    int steps = 0, plain_steps = 0;
    // The last round's texts side by side: identical under greedy acceptance, token for token.
    std::string text, plain_text;
    bool identical = false;
    double ms = 0, plain_ms = 0;  // the last round's decoding time of each
    std::vector<double> round_speedups;  // each round's own ratio, back to back: their spread is the noise
    int turn = 0;  // the turn whose prompt was decoded again
    double speedup() const { return plain_tokens_per_s > 0 ? tokens_per_s / plain_tokens_per_s : 0; }
};

// A message the context cannot take with the conversation before it: the tokens it needs with
// room for a max_new_tokens reply, the context's positions, and how many of the oldest turns must
// be left out for it to fit. Nothing is dropped unasked: the app says so in the chat and offers a
// new chat or leaving those turns out.
struct ContextFull {
    int needed = 0;  // 0: more than the context could spell, not tokenized
    int context = 0;
    int turns_to_leave_out = 0;
    std::string message() const;
};

struct ContextFullError : std::runtime_error {
    explicit ContextFullError(ContextFull f) : std::runtime_error(f.message()), full(f) {}
    ContextFull full;
};

class DecodeWorker {
public:
    DecodeWorker(gpu::Context& ctx, StepLog& log);
    ~DecodeWorker();  // stops the current generation and joins the thread
    DecodeWorker(const DecodeWorker&) = delete;
    DecodeWorker& operator=(const DecodeWorker&) = delete;

    // Queues a generation (replacing one still queued); false when one is already running.
    bool generate(const std::string& prompt, const DecodeSettings& settings);
    // Loads (or reloads) what the settings name without generating.
    void load(const DecodeSettings& settings);
    // Queues a speedup measurement (see SpeedupResult) of `new_tokens` tokens for the prompt of the
    // finished turn `turn` (a chat model's prompt is rebuilt as that turn had it); false while busy.
    bool measure_speedup(const std::string& prompt, const DecodeSettings& settings, int new_tokens, int turn);
    SpeedupResult speedup() const;
    bool measuring() const { return measuring_.load(); }
    void stop();  // the running generation ends after its current step
    bool busy() const { return busy_.load(); }
    // The loaded model has a chat template: its turns are messages and replies.
    bool chat_model() const { return chat_model_.load(); }
    // Positions of the loaded model's KV cache (0 before a load): what a conversation can hold.
    int context_size() const { return context_size_.load(); }
    // The last message refused because the conversation outgrew the context (until the next job).
    std::optional<ContextFull> context_full() const;
    // The loaded model's own chat template and where it was found, whatever the app chose for it.
    ChatTemplateDetection model_chat_template() const;
    // Blocks until no job is queued or running (tests and the screenshot mode).
    void wait_idle();

    // Teaching mode: hold before each step, release one step, or wait between steps.
    void set_paused(bool paused);
    bool paused() const { return paused_.load(); }
    void step_once();
    void set_delay_ms(int ms) { delay_ms_.store(ms); }

    // Called on the worker's thread whenever what the UI shows changes (a step, the status, the end
    // of a job), so an idle window can sleep until then. Set before the first job.
    void set_on_change(std::function<void()> f) { on_change_ = std::move(f); }
    std::string status() const;      // what is loaded, or what is being loaded
    // What the loaded EAGLE layer reads (none when EAGLE is not loaded), for the tree's caption.
    std::optional<EagleReads> eagle_reads() const;
    // Files the last loads left out because they were made for another model (see companion_fit.h),
    // once each: the UI drops them from its settings too.
    std::vector<DroppedFile> take_dropped();
    std::string last_error() const;  // empty when the last job succeeded
    // Warnings the runtime raised while loading or decoding (a tuning entry or cache file set
    // aside), each once, for the status area: from any thread.
    void add_warning(const std::string& text);
    std::vector<std::string> warnings() const;

private:
    enum class JobKind { Generate, Load, Measure };
    struct Job {
        std::string prompt;
        DecodeSettings settings;
        JobKind kind = JobKind::Generate;
        int new_tokens = 0;  // Measure
        int turn = 0;        // Measure: the turn whose prompt is decoded again
    };
    struct Loaded;
    void thread_main();
    void ensure_loaded(const DecodeSettings& s);
    void run(const Job& job);
    void measure(const Job& job);
    bool hold_before_step();  // teaching mode; false when stopped meanwhile
    void set_status(std::string s);
    void set_error(std::string s);

    gpu::Context& ctx_;
    StepLog& log_;
    std::unique_ptr<Loaded> loaded_;  // touched only by the worker thread
    mutable std::mutex mutex_;
    std::condition_variable cv_;
    std::optional<Job> job_;
    bool quit_ = false;
    int step_tokens_ = 0;  // single steps released while paused
    std::atomic<bool> busy_{false}, stop_{false}, paused_{false}, measuring_{false};
    SpeedupResult speedup_;
    std::atomic<int> delay_ms_{0};
    std::string status_, error_;
    std::optional<EagleReads> eagle_reads_;
    std::optional<ContextFull> context_full_;
    ChatTemplateDetection model_chat_template_;
    std::vector<DroppedFile> dropped_;
    std::vector<std::string> warnings_;
    std::function<void()> on_change_;
    std::chrono::steady_clock::time_point last_notice_;  // the worker thread's last step notice
    std::atomic<bool> chat_model_{false};
    std::atomic<int> context_size_{0};
    void changed() const;
    std::thread thread_;
};

}  // namespace medusa::chat
