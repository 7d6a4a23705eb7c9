// What `medusa serve` decodes with, built once from its flags as `medusa generate` builds it (the
// model, its tokenizer, the engine and the drafter), and how a request becomes a generation there:
// the request's fields over the flags' sampling, its prompt (through the chat template for a chat
// completion) checked against the context, then decoded by the one decoding thread.
#pragma once
#include <memory>
#include <string>

#include "args.h"
#include "decoding_setup.h"
#include "model/chat_template.h"
#include "model/model_file.h"
#include "model/tokenizer.h"
#include "openai_request.h"
#include "request_queue.h"

namespace medusa::cli {

struct ServedModel {
    // -m, --tokenizer, the drafter and sampling flags, --chat-template, -c: what `generate` reads.
    explicit ServedModel(const Args& args);
    ServedModel(const ServedModel&) = delete;  // the engine holds the file, the drafter the engine
    ServedModel& operator=(const ServedModel&) = delete;

    ModelFile file;
    Tokenizer tokenizer;
    std::string name;           // the model's id in the API: its file name
    DecodingSpec spec;          // the flags'; a request's fields replace its sampling and -n
    bool accept_given = false;  // --accept; without it each request's temperature picks the rule, as --temp does
    bool seed_given = false;    // --seed; without it (and without the request's seed) each request draws one
    ChatTemplateDetection chat;  // --chat-template's, else the model file's (or none, and why)
    Engine engine;
    Drafting drafting;  // after the engine: it drafts on the engine's runner
};

// The generation `request` asks for, or ApiError: 400 for a prompt longer than the context (the
// limit named) and for a chat completion when the model has no chat template.
std::shared_ptr<serve::GenerationJob> make_job(const serve::ApiRequest& request, const ServedModel& model, int id);

// Decodes the job, sending its text as it comes and then Done, or Failed (a model producing NaN,
// the server stopping); stops after the step where the job is cancelled. `log`: one line on stderr.
void decode_job(serve::GenerationJob& job, ServedModel& model, const serve::RequestQueue& queue, bool log);

}  // namespace medusa::cli
