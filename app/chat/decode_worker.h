// Decoding on its own thread: loads the model, tokenizer, heads and tree the settings name, runs
// MedusaDecoder::generate and appends every step to the StepLog. The UI thread only calls the
// small control methods below, which never wait for the GPU.
#pragma once
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "decode_settings.h"
#include "gpu/context.h"
#include "step_log.h"

namespace medusa::chat {

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
    void stop();  // the running generation ends after its current step
    bool busy() const { return busy_.load(); }
    // Blocks until no job is queued or running (tests and the screenshot mode).
    void wait_idle();

    // Teaching mode: hold before each step, release one step, or wait between steps.
    void set_paused(bool paused);
    bool paused() const { return paused_.load(); }
    void step_once();
    void set_delay_ms(int ms) { delay_ms_.store(ms); }

    std::string status() const;      // what is loaded, or what is being loaded
    std::string last_error() const;  // empty when the last job succeeded

private:
    struct Job {
        std::string prompt;
        DecodeSettings settings;
        bool generate = true;
    };
    struct Loaded;
    void thread_main();
    void ensure_loaded(const DecodeSettings& s);
    void run(const Job& job);
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
    std::atomic<bool> busy_{false}, stop_{false}, paused_{false};
    std::atomic<int> delay_ms_{0};
    std::string status_, error_;
    std::thread thread_;
};

}  // namespace medusa::chat
