#include "decode_worker.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>

#include "decode/speculative_decoder.h"
#include "model/load_model.h"
#include "setup/drafting.h"
#include "llm/context_length.h"
#include "llm/gpu_tree_runner.h"
#include "model/chat_template.h"
#include "model/model_file.h"
#include "model/stop_tokens.h"
#include "model/tokenizer.h"

namespace medusa::chat {

// The target model and what only depends on it, shared by every set of settings that names it.
struct TargetModel {
    std::string path;
    int ctx_size = 0;  // the settings' (0: the default), whose cache this is
    ModelFile file;
    std::unique_ptr<GpuModel> model;
    std::unique_ptr<GpuTreeRunner> runner;
};

// Its tokenizer and the stop tokens that go with it and the chat template spoken in.
struct TargetTokenizer {
    std::string path;  // empty: the model file's own vocabulary
    ChatTemplate chat = ChatTemplate::None;
    std::optional<Tokenizer> tokenizer;
    std::vector<int> stop_tokens;
};

// What one set of settings loaded. A new set is built beside the current one, reusing its
// models where the settings still name them, and replaces it only when all of it loaded: a
// failed load leaves the previous set (and its status line) in place.
struct DecodeWorker::Loaded {
    DecodeSettings::DecoderKey key;
    // The settings' spec as loaded: its drafter with the heads and tree the cache gave, where the
    // settings left them to it, and without the files that did not fit the model.
    DecodingSpec spec;
    std::string status;
    std::shared_ptr<TargetModel> target;
    std::shared_ptr<TargetTokenizer> tok;
    // The settings' drafter, what it drafts with, and the decoder over it (every mode).
    Drafting drafting;
    std::unique_ptr<SpeculativeDecoder> decoder;
    // Plain decoding with the same sampling, for the speedup measurement; built on first use.
    Drafting plain_drafting;
    std::unique_ptr<SpeculativeDecoder> plain;
    // Shortcuts for the decoding code below.
    const ModelFile& file() const { return target->file; }
    int context() const { return target->model->config().seq_len; }  // the KV cache's positions
    const Tokenizer& tokenizer() const { return *tok->tokenizer; }
    const std::vector<int>& stop_tokens() const { return tok->stop_tokens; }
};

namespace {

std::string file_name(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }

// The target the settings name: the current one when they still name it, else loaded anew.
std::shared_ptr<TargetModel> open_target(gpu::Context& ctx, const DecodeSettings& s,
                                         const std::shared_ptr<TargetModel>& current) {
    if (current && current->path == s.model_path && current->ctx_size == s.ctx_size) return current;
    auto t = std::make_shared<TargetModel>();
    t->path = s.model_path;
    t->ctx_size = s.ctx_size;
    t->file = load_model(s.model_path);
    const int trained = t->file.config.seq_len;
    if (s.ctx_size > trained)
        std::fprintf(stderr, "warning: --ctx-size %d is past the %d positions %s was trained for\n", s.ctx_size, trained,
                     s.model_path.c_str());
    t->model = std::make_unique<GpuModel>(ctx, t->file, GpuModelOptions{.context = choose_context(s.ctx_size, trained)});
    // Stage times now and then: timing every step slowed decoding threefold on a CPU driver.
    t->runner = std::make_unique<GpuTreeRunner>(*t->model, ctx.timestamps_supported() ? StageTiming::Sampled
                                                                                       : StageTiming::Off);
    return t;
}

// Its tokenizer (the settings' file, else the model's own vocabulary) and the stop tokens: the
// model's, and the chat template's end of turn (ChatML's <|im_end|>).
std::shared_ptr<TargetTokenizer> open_tokenizer(const DecodeSettings& s, const ModelFile& file, ChatTemplate chat) {
    auto t = std::make_shared<TargetTokenizer>();
    t->path = s.tokenizer_path;
    t->chat = chat;
    t->tokenizer = s.tokenizer_path.empty() && !file.embedded_tokenizer.empty()
                       ? Tokenizer::from_serialized(file.embedded_tokenizer, s.model_path)
                       : Tokenizer::from_file(s.tokenizer_path);
    check_vocab_match(file, *t->tokenizer);
    t->stop_tokens = model_stop_tokens(file, *t->tokenizer, chat_stop_tokens(chat, *t->tokenizer));
    return t;
}

std::string model_line(const ModelFile& file) {
    const auto& c = file.config;
    return file_name(file.path) + " (" + format_name(file.format) + ", " + family_name(c.arch.family) + ", " +
           std::to_string(c.n_layers) + " layers, dim " +
           std::to_string(c.dim) + ", vocab " + std::to_string(c.vocab_size) + ")";
}

}  // namespace

DecodeWorker::DecodeWorker(gpu::Context& ctx, StepLog& log) : ctx_(ctx), log_(log) {
    thread_ = std::thread([this] { thread_main(); });
}

DecodeWorker::~DecodeWorker() {
    {
        std::lock_guard lock(mutex_);
        quit_ = true;
        job_.reset();
    }
    stop_ = true;
    cv_.notify_all();
    thread_.join();
}

bool DecodeWorker::generate(const std::string& prompt, const DecodeSettings& settings) {
    std::lock_guard lock(mutex_);
    if (busy_) return false;
    job_ = Job{prompt, settings, JobKind::Generate};
    // Single-step releases count from here: one given before the worker picks the job up is kept.
    step_tokens_ = 0;
    busy_ = true;  // set here, so busy() is true from the moment the UI asked
    cv_.notify_all();
    return true;
}

void DecodeWorker::load(const DecodeSettings& settings) {
    std::lock_guard lock(mutex_);
    if (busy_) return;
    job_ = Job{"", settings, JobKind::Load};
    busy_ = true;
    cv_.notify_all();
}

bool DecodeWorker::measure_speedup(const std::string& prompt, const DecodeSettings& settings, int new_tokens,
                                   int turn) {
    std::lock_guard lock(mutex_);
    if (busy_ || new_tokens < 1) return false;
    job_ = Job{prompt, settings, JobKind::Measure, new_tokens, turn};
    busy_ = true;
    measuring_ = true;
    speedup_ = {};
    cv_.notify_all();
    return true;
}

SpeedupResult DecodeWorker::speedup() const {
    std::lock_guard lock(mutex_);
    return speedup_;
}

void DecodeWorker::stop() {
    {
        std::lock_guard lock(mutex_);
        if (job_) job_.reset(), busy_ = false, measuring_ = false;  // not started yet: drop it
    }
    stop_ = true;
    cv_.notify_all();
}

void DecodeWorker::wait_idle() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return !busy_ && !job_; });
}

void DecodeWorker::set_paused(bool paused) {
    paused_ = paused;
    cv_.notify_all();
}

void DecodeWorker::step_once() {
    {
        std::lock_guard lock(mutex_);
        ++step_tokens_;
    }
    cv_.notify_all();
}

std::vector<DroppedFile> DecodeWorker::take_dropped() {
    std::lock_guard lock(mutex_);
    return std::exchange(dropped_, {});
}

void DecodeWorker::add_warning(const std::string& text) {
    {
        std::lock_guard lock(mutex_);
        warnings_.push_back(text);
    }
    changed();
}

std::vector<std::string> DecodeWorker::warnings() const {
    std::lock_guard lock(mutex_);
    return warnings_;
}

std::string DecodeWorker::status() const {
    std::lock_guard lock(mutex_);
    return status_;
}

std::optional<ContextFull> DecodeWorker::context_full() const {
    std::lock_guard lock(mutex_);
    return context_full_;
}

ChatTemplateDetection DecodeWorker::model_chat_template() const {
    std::lock_guard lock(mutex_);
    return model_chat_template_;
}

std::string ContextFull::message() const {
    const std::string turns = std::to_string(turns_to_leave_out) + (turns_to_leave_out == 1 ? " turn" : " turns");
    return (needed > 0 ? "the conversation needs " + std::to_string(needed) + " tokens with room for the reply"
                       : std::string("the conversation is longer than")) +
           (needed > 0 ? ", more than the " : " the ") + std::to_string(context) +
           "-token context holds: start a new chat, or leave the oldest " + turns + " out of the model's context";
}

std::optional<EagleReads> DecodeWorker::eagle_reads() const {
    std::lock_guard lock(mutex_);
    return eagle_reads_;
}

std::string DecodeWorker::last_error() const {
    std::lock_guard lock(mutex_);
    return error_;
}

void DecodeWorker::set_status(std::string s) {
    {
        std::lock_guard lock(mutex_);
        status_ = std::move(s);
    }
    changed();
}

void DecodeWorker::set_error(std::string s) {
    {
        std::lock_guard lock(mutex_);
        error_ = std::move(s);
    }
    changed();
}

void DecodeWorker::changed() const {
    if (on_change_) on_change_();
}

void DecodeWorker::thread_main() {
    for (;;) {
        Job job;
        {
            std::unique_lock lock(mutex_);
            cv_.wait(lock, [&] { return quit_ || job_; });
            if (quit_) return;
            job = std::move(*job_);
            job_.reset();
        }
        stop_ = false;
        try {
            {
                std::lock_guard lock(mutex_);
                context_full_.reset();
            }
            set_error("");
            if (job.kind == JobKind::Generate) run(job);
            else if (job.kind == JobKind::Measure) measure(job);
            else ensure_loaded(job.settings);
        } catch (const ContextFullError& e) {
            {
                std::lock_guard lock(mutex_);
                context_full_ = e.full;
            }
            set_error(e.what());
        } catch (const NonFiniteLogits& e) {
            // Name the model whose logits were NaN, as medusa generate does.
            set_error((loaded_ ? loaded_->target->path + ": " : std::string()) + e.what());
            set_status(loaded_ ? loaded_->status : "nothing loaded");
        } catch (const std::exception& e) {
            // The loaded set is unchanged by a failure: its status stays, the error shows beside it.
            set_error(e.what());
            set_status(loaded_ ? loaded_->status : "nothing loaded");
        }
        {
            std::lock_guard lock(mutex_);
            busy_ = false;
            measuring_ = false;
        }
        cv_.notify_all();
        changed();
    }
}

void DecodeWorker::ensure_loaded(const DecodeSettings& s) {
    const DecodingSpec asked = s.spec();  // the settings' one conversion, unless a file is left out below
    const DecodeSettings::DecoderKey key = s.decoder_key(asked);
    if (loaded_ && loaded_->key == key) return;
    validate(asked);  // a bad value is named before anything loads
    const std::optional<ChatTemplate> chosen_chat = s.chosen_chat_template();
    const Loaded* old = loaded_.get();
    auto L = std::make_unique<Loaded>();
    if (!old || old->target->path != s.model_path || old->target->ctx_size != s.ctx_size)
        set_status("loading " + s.model_path);
    L->target = open_target(ctx_, s, old ? old->target : nullptr);
    // Heads, an EAGLE layer or a tokenizer made for another model are left out, with a line each.
    DecodeSettings fitted = s;
    const std::vector<DroppedFile> dropped = ill_fitting_files(s, L->file());
    drop_files(fitted, dropped);
    if (!dropped.empty()) {
        std::lock_guard lock(mutex_);
        dropped_.insert(dropped_.end(), dropped.begin(), dropped.end());
    }
    const DecodingSpec spec = dropped.empty() ? asked : fitted.spec();
    const bool same_target = old && old->target == L->target;
    // The chat template chosen in the app for this model, else its own.
    const ChatTemplateDetection own = detect_chat_template(L->file());
    const ChatTemplate chat = chosen_chat.value_or(own.kind);
    L->tok = same_target && old->tok->path == fitted.tokenizer_path && old->tok->chat == chat
                 ? old->tok
                 : open_tokenizer(fitted, L->file(), chat);
    const DraftingTarget target{.file = L->file(), .runner = *L->target->runner, .gpu = &ctx_, .context = L->context()};
    L->drafting = build_drafting(spec.drafter, target, same_target ? &old->drafting : nullptr,
                                 [this](const std::string& line) { set_status(line); }, spec.shaping);
    L->decoder = std::make_unique<SpeculativeDecoder>(target.runner, *L->drafting.drafter,
                                                      decode_options(spec, L->stop_tokens()));
    L->key = key;
    L->spec = spec;
    L->spec.drafter = L->drafting.spec;
    L->status = model_line(L->file()) + ", " + L->drafting.summary;
    for (const std::string& w : L->drafting.warnings) L->status += "; warning: " + w;
    L->status += ", " + std::string(accept_rule_name(L->decoder->rule().kind()));
    if (chat != own.kind || chat != ChatTemplate::None)
        L->status += std::string(", chat template ") + chat_template_name(chat) + (chat == own.kind ? "" : " (chosen)");
    chat_model_ = chat != ChatTemplate::None;
    context_size_ = L->context();
    loaded_ = std::move(L);  // the old set goes only now, with whatever it alone held
    {
        std::lock_guard lock(mutex_);
        eagle_reads_ = loaded_->drafting.eagle_reads;
        model_chat_template_ = own;
    }
    set_status(loaded_->status);
}

bool DecodeWorker::hold_before_step() {
    std::unique_lock lock(mutex_);
    if (paused_) {
        cv_.wait(lock, [&] { return stop_ || quit_ || !paused_ || step_tokens_ > 0; });
        if (step_tokens_ > 0) --step_tokens_;
    } else if (int ms = delay_ms_.load(); ms > 0) {
        cv_.wait_for(lock, std::chrono::milliseconds(ms), [&] { return stop_ || quit_ || paused_.load(); });
    }
    return !stop_ && !quit_;
}

namespace {

// Chat models: the template over this conversation's earlier turns (the prompts and the replies
// the log holds, less those left out; a clear starts a new conversation) and the new message.
// When that leaves no room to answer, ContextFullError says how many of the oldest turns must be
// left out: nothing is dropped unasked. Story models: the text as it is.
std::vector<int> prompt_tokens(ChatTemplate chat, int context, const Tokenizer& tok, const StepLog& log, int turn,
                               const std::string& text, const DecodeSettings& s) {
    const int max_new_tokens = s.max_new_tokens;
    // More bytes than the context could spell in its longest tokens cannot fit: refused before any
    // tokenizing, which takes a hundred bytes and more per byte (a pasted 20 MB took gigabytes).
    const size_t most_bytes = size_t(context) * tok.longest_token_bytes();
    if (text.size() > most_bytes)
        throw std::invalid_argument("the message is " + std::to_string(text.size()) + " bytes: more than the " +
                                    std::to_string(context) + "-token context can hold (at most " +
                                    std::to_string(most_bytes) + " bytes)");
    if (chat == ChatTemplate::None) return tok.encode(text, true);
    Conversation conv;
    conv.system = s.system_prompt.empty() ? default_system_prompt(chat) : s.system_prompt;
    conv.user = text;
    const StepLog::Snapshot past = log.read(0);
    for (const TurnRecord& t : past.turns) {
        if (t.id == turn || t.left_out) continue;
        // A reopened turn's reply is the text its tokens made: filtered as a live turn's is.
        StopStringFilter reply(chat_stop_strings(chat));
        if (t.shown_reply >= 0) {  // an earlier reply, flipped back to
            reply.feed(t.other_replies[size_t(t.shown_reply)]);
        } else {
            if (t.restored) reply.feed(t.saved_reply);
            for (const StepRecord& r : past.steps)
                if (r.turn == t.id)
                    for (const std::string& piece : r.emitted_text) reply.feed(piece);
        }
        reply.flush();
        std::string a = reply.reply();
        a.erase(0, a.find_first_not_of(' '));  // FastChat stores replies stripped
        conv.history.push_back({t.prompt, a});
    }
    // The oldest turns beyond what the context could spell must go whatever they tokenize to: they
    // are counted unread (a reopened chat of megabytes is not tokenized whole, turn after turn).
    const size_t turns = conv.history.size();
    size_t bytes = text.size() + conv.system.size(), unread = 0;
    for (const ChatTurn& h : conv.history) bytes += h.user.size() + h.assistant.size();
    while (unread < turns && bytes > most_bytes)
        bytes -= conv.history[unread].user.size() + conv.history[unread].assistant.size(), ++unread;
    conv.history.erase(conv.history.begin(), conv.history.begin() + long(unread));
    std::vector<int> ids = encode_chat(render_chat(chat, conv), tok);
    const int needed = unread == 0 ? int(ids.size()) + max_new_tokens : 0;
    while (!conv.history.empty() && int(ids.size()) + max_new_tokens > context) {
        conv.history.erase(conv.history.begin());
        ids = encode_chat(render_chat(chat, conv), tok);
    }
    // The message alone: a new chat would not help. (One that leaves less room than max tokens is
    // sent: its reply stops where the context ends, and says so.)
    if (int(ids.size()) >= context)
        throw std::invalid_argument("the message needs " + std::to_string(ids.size()) + " tokens: more than the " +
                                    std::to_string(context) + "-token context holds; shorten it");
    if (conv.history.size() < turns)
        throw ContextFullError({needed, context, int(turns - conv.history.size())});
    return ids;
}

}  // namespace

void DecodeWorker::run(const Job& job) {
    ensure_loaded(job.settings);
    Loaded& L = *loaded_;
    // A draft model's chain is drawn as one (each step's own drafter: auto changes it step by step,
    // and a controlled step may fall back to plain decoding).
    const bool chains = job.settings.draft.branches == 1;
    L.decoder->reseed(job.settings.sampling.seed);
    // A message the context cannot take is refused before its turn begins: the chat shows no
    // message without a reply.
    std::vector<int> prompt = prompt_tokens(L.tok->chat, L.context(), L.tokenizer(), log_, 0, job.prompt, job.settings);
    const int turn = log_.begin_turn(job.prompt, describe(L.spec), job.settings.mode, chat_model_);
    int prev = prompt.back();
    int steps = 0;
    // Time held in teaching mode (paused or slowed down) is not decoding time: tokens/s leaves it out.
    // Steps are timed from the first one's start, as the decoder's decode_ms is: the prefill and
    // first-use setup before it are the turn's prefill_ms.
    using Clock = std::chrono::steady_clock;
    double held_ms = 0;
    Clock::time_point t0;
    auto on_step = [&](const StepTrace& tr) {
        if (steps == 0) t0 = Clock::now() - std::chrono::duration_cast<Clock::duration>(
                                                 std::chrono::duration<double, std::milli>(tr.wall_ms));
        StepRecord r;
        r.turn = turn;
        r.trace = tr;
        r.source = chains && tr.drafter == DrafterKind::DraftModel ? StepSource::Draft : StepSource::Medusa;
        r.controlled = tr.control.has_value();
        for (const auto& n : tr.nodes) r.sampled = r.sampled || n.sampled;
        for (size_t i = 0; i < tr.nodes.size(); ++i) {
            const int parent = tr.nodes[i].parent >= 0 ? tr.nodes[tr.nodes[i].parent].token : prev;
            r.node_text.push_back(L.tokenizer().piece_text(parent, tr.nodes[i].token));
            const int greedy = tr.nodes[i].parent_greedy;
            r.greedy_text.push_back(greedy >= 0 ? L.tokenizer().piece_text(parent, greedy) : "");
        }
        // The bonus token, and a rejection's alternatives to it, follow the last accepted token.
        const int last_kept = tr.path.empty() ? prev : tr.nodes[tr.path.back()].token;
        r.bonus_text = L.tokenizer().piece_text(last_kept, tr.bonus);
        for (const RejectionBar& b : tr.rejection) r.rejection_text.push_back(L.tokenizer().piece_text(last_kept, b.token));
        for (int t : tr.emitted) {
            r.emitted_text.push_back(L.tokenizer().piece_text(prev, t));
            prev = t;
        }
        r.t_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count() - held_ms;
        log_.append(std::move(r));
        // A step wakes the window at most every 30 ms: thousands of steps a second would otherwise
        // spend their time posting window events.
        if (const auto now = Clock::now(); now - last_notice_ > std::chrono::milliseconds(30)) {
            last_notice_ = now;
            changed();
        }
        ++steps;
        if (job.settings.max_steps > 0 && steps >= job.settings.max_steps) return false;
        const auto hold = Clock::now();
        const bool go_on = hold_before_step();
        held_ms += std::chrono::duration<double, std::milli>(Clock::now() - hold).count();
        return go_on;
    };
    GenerationStats stats = L.decoder->generate(prompt, on_step);
    log_.end_turn(turn, stats.stop_reason, stats.new_tokens, stats.steps, std::max(0.0, stats.decode_ms - held_ms),
                  stats.prefill_ms);
}

}  // namespace medusa::chat

namespace medusa::chat {

void DecodeWorker::measure(const Job& job) {
    const DecodeSettings& s = job.settings;
    ensure_loaded(s);
    Loaded& L = *loaded_;
    const std::string loaded_status = status();
    // As the turn itself was encoded (a chat model: its template over the turns before it).
    std::vector<int> prompt = prompt_tokens(L.tok->chat, L.context(), L.tokenizer(), log_, job.turn, job.prompt, s);
    // Both runs stop after the same number of new tokens (a step may overshoot by its accepted
    // guesses; tokens/s counts what was produced). Nothing is logged and nobody waits between steps.
    auto until = [&](int n, std::vector<int>* out = nullptr) {
        if (out) out->clear();
        return [this, n, out, count = 0](const StepTrace& tr) mutable {
            count += int(tr.emitted.size());
            if (out) out->insert(out->end(), tr.emitted.begin(), tr.emitted.end());
            return count < n && !stop_;
        };
    };
    auto text_of = [&](const std::vector<int>& tokens) {
        std::string t;
        int prev = prompt.back();
        for (int tok : tokens) t += L.tokenizer().piece_text(prev, tok), prev = tok;
        return t;
    };
    if (!L.plain) {
        // The same sampling and instrumentation as the decoder it is compared with.
        DecodingSpec plain = L.spec;
        plain.drafter = PlainSpec{};
        L.plain_drafting = build_drafting(plain.drafter, {.file = L.file(), .runner = *L.target->runner});
        L.plain = std::make_unique<SpeculativeDecoder>(*L.target->runner, *L.plain_drafting.drafter,
                                                       decode_options(plain, L.stop_tokens()));
        set_status("measuring: warming up plain decoding");
        L.plain->generate(prompt, until(8));
    }
    SpeedupResult r;
    r.turn = job.turn;
    r.mode = s.mode_name();
    r.drafter = s.mode;
    // Alternating runs, the best of each kept: the machine's other load only ever slows a run down.
    for (int round = 1; round <= SpeedupResult::kRounds && !stop_; ++round) {
        set_status("measuring (" + std::to_string(round) + "/" + std::to_string(SpeedupResult::kRounds) + "): " + r.mode);
        std::vector<int> ta, tb;
        L.decoder->reseed(s.sampling.seed);
        const GenerationStats a = L.decoder->generate(prompt, until(job.new_tokens, &ta));
        set_status("measuring (" + std::to_string(round) + "/" + std::to_string(SpeedupResult::kRounds) +
                   "): plain decoding");
        L.plain->reseed(s.sampling.seed);
        const GenerationStats b = L.plain->generate(prompt, until(job.new_tokens, &tb));
        r.text = text_of(ta), r.plain_text = text_of(tb);
        r.identical = ta == tb;
        r.ms = a.decode_ms, r.plain_ms = b.decode_ms;
        if (a.decode_tokens_per_s() > r.tokens_per_s)
            r.tokens_per_s = a.decode_tokens_per_s(), r.tokens = a.new_tokens, r.steps = a.steps;
        if (b.decode_tokens_per_s() > r.plain_tokens_per_s)
            r.plain_tokens_per_s = b.decode_tokens_per_s(), r.plain_tokens = b.new_tokens, r.plain_steps = b.steps;
        if (b.decode_tokens_per_s() > 0) r.round_speedups.push_back(a.decode_tokens_per_s() / b.decode_tokens_per_s());
    }
    set_status(loaded_status);
    if (stop_) return;  // stopped: no result
    r.valid = true;
    std::lock_guard lock(mutex_);
    speedup_ = r;
}

}  // namespace medusa::chat
