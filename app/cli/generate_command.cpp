// `medusa generate`: stdout carries exactly the prompt and its continuation; every decoding mode
// (plain, Medusa heads, a draft model, n-gram lookup, EAGLE) is the same speculative loop.
#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "chat_prompt.h"
#include "commands.h"
#include "context_size.h"
#include "decoding_setup.h"
#include "interrupt.h"
#include "model/stop_tokens.h"
#include "session.h"

namespace medusa::cli {

int run_generate(int argc, char** argv) {
    Args args(argc, argv, 2, flags_of("generate"));
    const auto trace_file = open_trace(args);  // first: a path that cannot be written fails before any work
    ModelFile file = open_model(args);
    Tokenizer tokenizer = open_tokenizer(args, file);
    const std::string prompt = args.str("--prompt", "");
    const DecodingSpec spec = decoding_spec(args);
    // --chat: the model's chat template makes the prompt; the reply ends at its stop tokens/strings.
    const ChatSetup chat = setup_chat(args, file, tokenizer, prompt);
    const DecodeOptions options = decode_options(spec, model_stop_tokens(file, tokenizer, chat.stop_tokens));
    StopStringFilter stop_strings(chat.stop_strings);

    // The cache holds the prompt, the new tokens and one verified block past them: all this run
    // reaches, so a model claiming a huge context costs no more than a small one.
    const int64_t reach = int64_t(chat.tokens.size()) + options.max_new_tokens + TokenBlock::kMaxTokens;
    const int context = context_size(args, file, int(std::min<int64_t>(reach, INT32_MAX)));
    if (int(chat.tokens.size()) > context)
        throw UsageError("the prompt has " + std::to_string(chat.tokens.size()) + " tokens, more than the context of " +
                         std::to_string(context) +
                         (args.has("--ctx-size") ? " that --ctx-size gives"
                                                 : " " + file.path + " was trained for (--ctx-size allows more)"));
    Engine engine = open_engine(args, file, {.context = context});
    Drafting drafting = make_drafting(spec.drafter, file, engine, spec.shaping);
    SpeculativeDecoder decoder(*engine.runner, *drafting.drafter, options);
    std::fputs(chat.shown.c_str(), stdout);
    std::fflush(stdout);
    int prev = chat.tokens.back();
    const InterruptScope interrupt;  // Ctrl-C ends the text after this step, statistics included
    auto on_step = [&](const StepTrace& step) {
        for (int token : step.emitted) {
            std::string piece = stop_strings.feed(tokenizer.piece_text(prev, token));
            std::fwrite(piece.data(), 1, piece.size(), stdout);
            prev = token;
        }
        std::fflush(stdout);
        if (trace_file) trace_file->write(step.to_json() + "\n");
        return !stop_strings.stopped() && !interrupt_requested();
    };
    GenerationStats stats;
    try {
        stats = decoder.generate(chat.tokens, on_step);
    } catch (const NonFiniteLogits& e) {
        std::fputs("\n", stdout);  // ends the partial text; the error goes to stderr
        // The logits are the target's, or a draft model's when it drafts.
        const std::string whose =
            args.has("--draft-model") ? file.path + " or " + args.str("--draft-model") : file.path;
        throw FormatError(whose + ": " + e.what());
    }
    if (trace_file) trace_file->commit();
    std::fputs((stop_strings.flush() + "\n").c_str(), stdout);
    std::fflush(stdout);  // the text ends before the statistics on stderr
    if (stats.stop_reason == StopReason::Context)
        std::fprintf(stderr, "note: reached the end of the context (%d tokens%s)\n", engine.context,
                     engine.context < file.config.seq_len ? "; --ctx-size allows more" : "");
    if (!args.has("--quiet"))
        std::fprintf(stderr, "%s\n", statistics_line(spec, drafting, decoder.rule().kind(), engine, stats).c_str());
    if (engine.validation_messages() > 0) {
        std::fprintf(stderr, "error: %d Vulkan validation message(s)\n", engine.validation_messages());
        return 3;
    }
    if (interrupt_requested()) {
        std::fprintf(stderr, "medusa generate: interrupted after %d new tokens\n", stats.new_tokens);
        return kInterruptedExit;
    }
    return 0;
}

}  // namespace medusa::cli
