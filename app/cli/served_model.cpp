#include "served_model.h"

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "chat_prompt.h"
#include "context_size.h"
#include "model/stop_tokens.h"
#include "plain_chat.h"
#include "reply_text.h"
#include "session.h"
#include "terminal_text.h"

namespace medusa::cli {

using serve::ApiError;
using serve::ApiRequest;
using serve::Endpoint;
using serve::GenerationJob;
using serve::JobEvent;

ServedModel::ServedModel(const Args& args)
    : file(open_model(args)),
      tokenizer(open_tokenizer(args, file)),
      name(std::filesystem::path(file.path).filename().string()),
      spec(decoding_spec(args)),
      accept_given(args.has("--accept")),
      seed_given(args.has("--seed")),
      chat(chosen_chat_template(args, file)),
      // A request may reach any position: the whole context (-c, else the model's up to 4096).
      engine(open_engine(args, file, {.context = context_size(args, file)})),
      drafting(make_drafting(spec.drafter, file, engine, spec.shaping)) {}

namespace {

// The flags' spec with what the request sets in their place.
DecodingSpec request_spec(const serve::SamplingFields& f, const ServedModel& model) {
    DecodingSpec spec = model.spec;
    SamplingParams& s = spec.sampling;
    if (f.temperature) s.temperature = *f.temperature;
    if (f.top_p) s.top_p = *f.top_p;
    if (f.min_p) s.min_p = *f.min_p;
    if (f.top_k) s.top_k = *f.top_k;
    if (f.max_tokens) spec.max_new_tokens = *f.max_tokens;
    if (f.seed) s.seed = *f.seed;
    else if (!model.seed_given) s.seed = uint64_t(std::chrono::system_clock::now().time_since_epoch().count());
    if (f.frequency_penalty) s.frequency_penalty = *f.frequency_penalty;
    if (f.presence_penalty) s.presence_penalty = *f.presence_penalty;
    for (const auto& [token, bias] : f.logit_bias) {
        if (token >= model.tokenizer.vocab_size())
            throw serve::invalid_request("invalid_value",
                                         "logit_bias names the token " + std::to_string(token) + ", past the vocabulary of " +
                                             std::to_string(model.tokenizer.vocab_size()) + " tokens",
                                         "logit_bias");
        s.logit_bias.push_back({token, bias});
    }
    if (!model.accept_given) spec.rule = s.temperature > 0 ? AcceptRule::Sample : AcceptRule::Greedy;
    try {
        validate(spec);
    } catch (const SpecError& e) {  // the parser's ranges keep the request's fields valid: a flag's combination
        throw serve::invalid_request("invalid_value", e.what());
    }
    return spec;
}

// "the prompt has 600 tokens: more than the context of 512 tokens holds (...)".
ApiError too_long(const std::string& what, const std::string& note, const ServedModel& model, const std::string& param) {
    const bool trained = model.engine.context >= model.file.config.seq_len;
    std::string notes = note;
    if (!trained) notes += std::string(notes.empty() ? "" : "; ") + "medusa serve --ctx-size allows more";
    return serve::invalid_request("context_length_exceeded",
                                  what + ": more than the context of " + std::to_string(model.engine.context) +
                                      " tokens holds" + (notes.empty() ? "" : " (" + notes + ")"),
                                  param);
}

}  // namespace

std::shared_ptr<GenerationJob> make_job(const ApiRequest& request, const ServedModel& model, int id) {
    auto job = std::make_shared<GenerationJob>();
    job->id = id;
    job->endpoint = request.endpoint;
    job->spec = request_spec(request.sampling, model);
    job->choices = request.n;
    job->logprobs = request.logprobs.value_or(-1);
    const bool chat = request.endpoint == Endpoint::ChatCompletions;
    const std::string param = chat ? "messages" : "prompt";
    // More bytes than the context could spell in its longest tokens cannot fit: refused before
    // tokenizing, which costs far more memory than the text.
    const size_t most_bytes = size_t(model.engine.context) * model.tokenizer.longest_token_bytes();
    if (serve::text_bytes(request) > most_bytes)
        throw too_long("the " + param + " " + (chat ? "hold " : "is ") + std::to_string(serve::text_bytes(request)) +
                           " bytes",
                       "at most " + std::to_string(most_bytes) + " bytes, in its longest tokens", model, param);
    std::vector<int> chat_stops;
    if (chat && model.chat.kind == ChatTemplate::None) {
        // Asked for by name: the plain rendering (plain_chat.h). Else the model has none to use.
        if (!model.chat.named)
            throw ApiError(400, "invalid_request_error", "no_chat_template",
                           model.name + " has no chat template (" + model.chat.reason +
                               "): use /v1/completions, or start medusa serve with --chat-template " +
                               chat_template_names("|") + " (none: plain \"User: ...\" and \"Assistant: ...\" lines)");
        job->prompt = model.tokenizer.encode(plain_chat_text(with_tools_offered(request.messages, request.tools)), true);
        job->stop_strings = plain_chat_stop_strings();
    } else if (chat) {
        const auto messages = serve::with_default_system(request.messages, default_system_prompt(model.chat.kind));
        job->prompt = encode_chat(render_messages(model.chat.kind, messages, true, request.tools), model.tokenizer);
        chat_stops = chat_stop_tokens(model.chat.kind, model.tokenizer);
        job->stop_strings = chat_stop_strings(model.chat.kind);
    } else {
        // Special tokens written in the prompt are those tokens, as llama.cpp's server reads them:
        // front-ends that apply a chat format themselves send its markers as text.
        job->prompt = model.tokenizer.encode(request.prompt, true, true);
    }
    job->stop_tokens = model_stop_tokens(model.file, model.tokenizer, chat_stops);
    job->stop_strings.insert(job->stop_strings.end(), request.stop.begin(), request.stop.end());
    if (job->prompt.empty())
        throw serve::invalid_request("invalid_value", "the " + param + " is empty (this tokenizer adds no BOS)", param);
    if (int(job->prompt.size()) > model.engine.context)
        throw too_long("the " + param + " " + (chat ? "make " : "has ") + std::to_string(job->prompt.size()) + " tokens",
                       "", model, param);
    return job;
}

namespace {

// `token` after `prev` with its log-probabilities, as text.
serve::TokenLogprobText token_text(const Tokenizer& tok, int prev, const TokenLogprobs& l) {
    serve::TokenLogprobText t{tok.piece_text(prev, l.token), l.logprob, {}};
    for (const TopLogprob& top : l.top) t.top.push_back({tok.piece_text(prev, top.token), top.logprob});
    return t;
}

}  // namespace

void decode_job(GenerationJob& job, ServedModel& model, const serve::RequestQueue& queue, bool log) {
    auto fail = [&](const ApiError& e) { job.send(JobEvent::failed(e)); };
    if (job.cancelled()) {  // its client went away while it waited, or the server is stopping
        if (const auto why = queue.closed_because()) fail(*why);
        return;
    }
    DecodeOptions options = decode_options(job.spec, job.stop_tokens);
    options.logprobs = job.logprobs;
    SpeculativeDecoder decoder(*model.engine.runner, *model.drafting.drafter, options);
    GenerationStats total;
    for (int choice = 0; choice < job.choices; ++choice) {
        decoder.reseed(options.sampling.seed + uint64_t(choice));  // the next choice, the next seed
        serve::ReplyText text(job.stop_strings);
        int prev = job.prompt.back();
        // Tokens up to the one that completed a stop string: what plain decoding emits, whatever a
        // step accepted past it.
        int kept = 0;
        auto on_step = [&](const StepTrace& step) {
            std::string piece;
            std::vector<serve::TokenLogprobText> tokens;
            for (size_t k = 0; k < step.emitted.size(); ++k) {
                if (text.stopped()) break;
                const int token = step.emitted[k];
                if (k < step.logprobs.size()) tokens.push_back(token_text(model.tokenizer, prev, step.logprobs[k]));
                piece += text.feed(model.tokenizer.piece_text(prev, token));
                prev = token;
                ++kept;
            }
            if (!piece.empty() || !tokens.empty()) job.send(JobEvent::piece(choice, std::move(piece), std::move(tokens)));
            return !text.stopped() && !job.cancelled();
        };
        GenerationStats stats;
        try {
            stats = decoder.generate(job.prompt, on_step);
        } catch (const NonFiniteLogits& e) {
            // The logits are the target's, or a draft model's when one drafts.
            const std::string whose = model.drafting.draft ? model.file.path + " or " + model.drafting.draft->path : model.file.path;
            fail(ApiError(500, "server_error", "non_finite_logits", whose + ": " + e.what()));
            if (log) std::fprintf(stderr, "medusa serve: request %d: %s\n", job.id, terminal_safe(whose + ": " + e.what()).c_str());
            return;
        } catch (const std::exception& e) {  // the device lost, out of memory: this request fails, the server stays
            fail(ApiError(500, "server_error", "decoding_failed", e.what()));
            if (log) std::fprintf(stderr, "medusa serve: request %d: error: %s\n", job.id, terminal_safe(e.what()).c_str());
            return;
        }
        if (text.stopped()) stats.new_tokens = kept, stats.stop_reason = StopReason::StopString;
        total.prompt_tokens = stats.prompt_tokens;
        total.add(stats);
        const auto closed = queue.closed_because();
        if (log)
            std::fprintf(stderr, "medusa serve: request %d%s: %s%s\n", job.id,
                         job.choices > 1 ? (", choice " + std::to_string(choice)).c_str() : "",
                         statistics_line(job.spec, model.drafting, decoder.rule().kind(), model.engine, stats).c_str(),
                         !job.cancelled() ? "" : closed ? ", the server is stopping" : ", the client went away");
        if (job.cancelled()) {
            if (closed) fail(*closed);
            return;  // else nobody is listening
        }
        if (std::string rest = text.finish(); !rest.empty()) job.send(JobEvent::piece(choice, std::move(rest)));
        const bool stopped = text.stopped() || stats.stop_reason == StopReason::StopToken;
        job.send(JobEvent::done(choice, stopped ? serve::FinishReason::Stop : serve::FinishReason::Length,
                                {total, model.drafting.summary, accept_rule_name(decoder.rule().kind())}));
    }
}

}  // namespace medusa::cli
