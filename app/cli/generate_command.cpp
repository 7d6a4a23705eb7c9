// `medusa generate`: stdout carries exactly the prompt and its continuation.
#include <chrono>
#include <cstdio>
#include <memory>

#include "commands.h"
#include <fstream>

#include "decode/autoregressive.h"
#include "draft_generate.h"
#include "decode/medusa_decoder.h"
#include "llm/cpu_reference.h"
#include "llm/gpu_model.h"
#include "chat_prompt.h"
#include "session.h"

namespace medusa::cli {

int run_generate(int argc, char** argv) {
    Args args(argc, argv, 2, {"--cpu", "--validate", "--quiet", "--adaptive-gamma", "--chat"},
              {"--model", "--tokenizer", "--prompt", "--n-predict", "--temp", "--top-p", "--seed", "--device",
               "--heads", "--num-heads", "--tree", "--accept", "--typical-eps", "--typical-delta", "--trace",
               "--draft-model", "--gamma", "--system", "--chat-template", "--top-k", "--repeat-penalty",
               "--repeat-last-n"});
    ModelFile file = open_model(args);
    Tokenizer tokenizer = open_tokenizer(args, file);
    const std::string prompt = args.str("--prompt", "");
    GenerationOptions options;
    options.max_new_tokens = args.integer("--n-predict", 256);
    options.sampling.temperature = args.number("--temp", 0.8f);
    options.sampling.top_p = args.number("--top-p", 0.95f);
    options.sampling.seed = args.has("--seed") ? uint64_t(args.integer("--seed", 0))
                                               : uint64_t(std::chrono::system_clock::now().time_since_epoch().count());
    if (options.max_new_tokens < 0) throw UsageError("-n must be >= 0");
    if (options.sampling.temperature < 0) throw UsageError("--temp must be >= 0");
    if (options.sampling.top_p <= 0 || options.sampling.top_p > 1) throw UsageError("--top-p must be in (0, 1]");
    options.sampling.top_k = args.integer("--top-k", 0);
    options.sampling.repeat_penalty = args.number("--repeat-penalty", 1.0f);
    options.sampling.repeat_last_n = args.integer("--repeat-last-n", 64);
    if (options.sampling.top_k < 0) throw UsageError("--top-k must be >= 0 (0: off)");
    if (options.sampling.repeat_penalty <= 0) throw UsageError("--repeat-penalty must be > 0 (1: off)");
    if (options.sampling.repeat_last_n < 0) throw UsageError("--repeat-last-n must be >= 0");
    options.stop_tokens = {tokenizer.eos_id()};
    // llama2.c story models separate stories with BOS, so run.c stops there too.
    if (file.format.rfind("llama2c", 0) == 0) options.stop_tokens.push_back(tokenizer.bos_id());
    // --chat: the model's chat template makes the prompt; the reply ends at its stop tokens/strings.
    const ChatSetup chat = setup_chat(args, file, tokenizer, prompt);
    options.stop_tokens.insert(options.stop_tokens.end(), chat.stop_tokens.begin(), chat.stop_tokens.end());
    StopStringFilter stop_strings(chat.stop_strings);

    if (args.has("--draft-model")) {
        if (chat.kind != ChatTemplate::None) throw UsageError("--chat is not supported with --draft-model yet");
        return run_draft_generate(args, file, tokenizer, prompt, options);
    }
    const bool medusa = args.has("--heads") || args.has("--tree") || args.has("--accept");
    if (medusa && args.has("--cpu")) throw UsageError("Medusa decoding runs on the GPU; drop --cpu");
    for (const char* flag : {"--top-p", "--top-k", "--repeat-penalty"})
        if (medusa && args.has(flag))
            throw UsageError(std::string("Medusa's acceptance on the GPU uses the temperature only; ") + flag +
                             " works with plain decoding and --draft-model");
    if (medusa) {
        auto gpu = open_gpu(args, &file);
        GpuModel model(*gpu, file);
        MedusaHeads heads = open_heads(args, file);
        TreeBuffers tree = open_tree(args);
        MedusaOptions mo;
        mo.rule = parse_accept_rule(args.str("--accept", options.sampling.temperature > 0 ? "sample" : "greedy"));
        mo.temperature = options.sampling.temperature;
        mo.typical_eps = args.number("--typical-eps", 0.09f);
        mo.typical_delta = args.number("--typical-delta", 0.3f);
        mo.seed = options.sampling.seed;
        mo.max_new_tokens = options.max_new_tokens;
        mo.stop_tokens = options.stop_tokens;
        std::ofstream trace_file = open_trace(args);
        MedusaDecoder decoder(model, file, heads, tree, mo);
        std::vector<int> tokens = chat.tokens;
        std::fputs(chat.shown.c_str(), stdout);
        std::fflush(stdout);
        int prev = tokens.back();
        GenerationStats stats = decoder.generate(tokens, [&](const StepTrace& step) {
            for (int token : step.emitted) {
                std::string piece = stop_strings.feed(tokenizer.piece_text(prev, token));
                std::fwrite(piece.data(), 1, piece.size(), stdout);
                prev = token;
            }
            std::fflush(stdout);
            if (trace_file.is_open()) trace_file << step.to_json() << "\n";
            return !stop_strings.stopped();
        });
        std::fputs((stop_strings.flush() + "\n").c_str(), stdout);
        std::fflush(stdout);  // the text ends before the statistics on stderr
        if (stats.stop_reason == "context")
            std::fprintf(stderr, "note: reached the end of the model's context (%d tokens)\n", model.config().seq_len);
        if (!args.has("--quiet"))
            std::fprintf(stderr,
                         "medusa (%s, %d heads, %d-node tree, %s) on %s: %d new tokens in %d steps (%.2f tokens/step) "
                         "at %.1f tokens/s (stop: %s)\n",
                         heads.source.c_str(), heads.count(), tree.num_nodes, accept_rule_name(mo.rule),
                         gpu->info().name.c_str(), stats.new_tokens, stats.forward_passes,
                         stats.forward_passes ? double(stats.new_tokens - 1) / stats.forward_passes : 0.0,
                         stats.decode_tokens_per_s(), stats.stop_reason.c_str());
        return gpu->validation_messages() > 0 ? 3 : 0;
    }

    std::unique_ptr<gpu::Context> gpu;
    std::unique_ptr<LanguageModel> model;
    if (args.has("--cpu")) {
        model = std::make_unique<CpuReferenceModel>(file);
    } else {
        gpu = open_gpu(args, &file);
        model = std::make_unique<GpuModel>(*gpu, file);
    }
    std::vector<int> tokens = chat.tokens;
    std::fputs(chat.shown.c_str(), stdout);
    std::fflush(stdout);
    int prev = tokens.back();
    GenerationStats stats = generate_autoregressive(*model, tokens, options, [&](int token) {
        std::string piece = stop_strings.feed(tokenizer.piece_text(prev, token));
        std::fwrite(piece.data(), 1, piece.size(), stdout);
        std::fflush(stdout);
        prev = token;
        return !stop_strings.stopped();
    });
    std::fputs((stop_strings.flush() + "\n").c_str(), stdout);
    std::fflush(stdout);  // the text ends before the statistics on stderr
    if (stats.stop_reason == "context")
        std::fprintf(stderr, "note: reached the end of the model's context (%d tokens)\n", model->config().seq_len);
    if (!args.has("--quiet"))
        std::fprintf(stderr, "%s on %s: %d prompt tokens in %.1f ms, %d new tokens at %.1f tokens/s (stop: %s)\n",
                     model->engine_name(), gpu ? gpu->info().name.c_str() : "cpu", stats.prompt_tokens,
                     stats.prefill_ms, stats.new_tokens, stats.decode_tokens_per_s(), stats.stop_reason.c_str());
    if (gpu && gpu->validation_messages() > 0) {
        std::fprintf(stderr, "error: %d Vulkan validation message(s)\n", gpu->validation_messages());
        return 3;
    }
    return 0;
}

}  // namespace medusa::cli
