#include "command_flags.h"

namespace medusa::cli {

namespace {

// The drafters' options, shared by generate, serve and bench.
const std::set<std::string> kDrafterOptions = {
    "--heads", "--num-heads", "--tree", "--draft-model", "--gamma", "--draft-tree", "--ngram", "--ngram-match",
    "--ngram-branches", "--eagle", "--eagle-tree", "--eagle-topk", "--eagle-depth", "--eagle-nodes", "--speculate"};
// Sampling and acceptance, shared by generate, serve and bench.
const std::set<std::string> kSamplingOptions = {"--temp",  "--top-k",        "--top-p",       "--min-p", "--repeat-penalty",
                                                "--repeat-last-n", "--seed", "--accept", "--typical-eps",
                                                "--typical-delta"};
// The trainers' common options.
const std::set<std::string> kTrainingOptions = {"--model", "--tokenizer", "--out",  "--steps", "--seed",
                                                "--sequences", "--lr", "--device", "--max-len", "--data-engine",
                                                "--checkpoint-every"};

std::set<std::string> joined(std::initializer_list<std::set<std::string>> parts) {
    std::set<std::string> out;
    for (const auto& p : parts) out.insert(p.begin(), p.end());
    return out;
}

}  // namespace

const std::map<std::string, CommandFlags>& command_flags() {
    static const std::map<std::string, CommandFlags> table = {
        {"generate",
         {{"--cpu", "--validate", "--quiet", "--adaptive-gamma", "--chat", "--fixed-shape"},
          joined({kDrafterOptions, kSamplingOptions,
                  {"--model", "--tokenizer", "--prompt", "--n-predict", "--device", "--trace", "--system",
                   "--chat-template", "--ctx-size"}})}},
        {"serve",
         {{"--cpu", "--validate", "--quiet", "--adaptive-gamma", "--fixed-shape"},
          joined({kDrafterOptions, kSamplingOptions,
                  {"--model", "--tokenizer", "--n-predict", "--device", "--chat-template", "--ctx-size", "--host",
                   "--port", "--api-key", "--parallel", "--cors", "--request-timeout"}})}},
        {"bench",
         {{"--validate", "--no-cpu", "--no-medusa", "--adaptive-gamma", "--tune-kernels", "--fixed-shape"},
          joined({kDrafterOptions, kSamplingOptions,
                  {"--model", "--synthetic", "--dtype", "--json", "--plot", "--runs", "--tokens", "--prompt-tokens",
                   "--device", "--tokenizer", "--ctx-size", "--max-block", "--position", "--compare",
                   "--kernel-layouts", "--tune-out", "--prompts"}})}},
        {"info", {{"--validate"}, {"--model", "--device", "--synthetic", "--dtype", "--tokenizer"}}},
        {"tokenize", {{"--bos", "--parse-special"}, {"--model", "--tokenizer", "--prompt", "--file"}}},
        {"tree", {{}, {"--topk"}}},
        {"plot", {{}, {}}},
        {"train-heads", {{"--resume", "--validate"}, joined({kTrainingOptions, {"--heads", "--batch", "--layers"}})}},
        {"train-heads --joint",
         {{"--joint", "--resume", "--validate"},
          joined({kTrainingOptions,
                  {"--heads", "--layers", "--init-heads", "--warmup-steps", "--lora-rank", "--lora-alpha", "--lambda",
                   "--backbone-lr", "--seq-len", "--batch-seqs"}})}},
        {"train-eagle",
         {{"--resume", "--validate"},
          joined({kTrainingOptions, {"--batch", "--noise", "--token-weight", "--depth", "--eval-positions"}})}},
        {"train-eagle --eagle3",
         {{"--eagle3", "--resume", "--validate"},
          joined({kTrainingOptions,
                  {"--batch", "--layers", "--draft-vocab", "--ttt-steps", "--depth", "--eval-positions"}})}},
        {"tune-tree",
         {{"--validate"},
          {"--model", "--tokenizer", "--heads", "--out", "--seed", "--sequences", "--device", "--max-nodes",
           "--min-nodes", "--plot", "--ctx-size"}}},
        {"export-heads", {{}, {"--model", "--heads", "--num-heads", "--out", "--layout", "--base-model"}}},
        {"export-gguf", {{}, {"--model", "--synthetic", "--dtype", "--tokenizer", "--out"}}},
    };
    return table;
}

const CommandFlags& flags_of(const std::string& command) { return command_flags().at(command); }

}  // namespace medusa::cli
