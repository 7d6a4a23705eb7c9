// `medusa`: the command-line face of the engine.
#include <cstdio>
#include <cstring>
#include <exception>
#include <sstream>
#include <string>

#include "args.h"
#include "commands.h"
#include "interrupt.h"
#include "terminal_text.h"

namespace {

const char* kUsage =
    "usage: medusa <command> [options]\n"
    "\n"
    "commands:\n"
    "  generate -m MODEL [--tokenizer FILE] -p PROMPT [-n N] [--temp T] [--top-k K] [--top-p P] [--min-p P]\n"
    "           [--repeat-penalty R] [--repeat-last-n N] [--seed S] [--cpu] [--device N] [--validate] [--quiet]\n"
    "           [--accept greedy|typical|sample] [--typical-eps E] [--typical-delta D] [--trace FILE.jsonl]\n"
    "           [--chat [--system TEXT] [--chat-template NAME]] [-c|--ctx-size N]\n"
    "           and one drafter:\n"
    "           [--heads FILE|init [--num-heads K]] [--tree NAME|FILE|dense:W,..|chain:N]   Medusa heads\n"
    "           [--draft-model FILE [--gamma N] [--adaptive-gamma] [--draft-tree K]]      a draft model\n"
    "           [--ngram N [--ngram-match M] [--ngram-branches B]]                      n-gram lookup\n"
    "           [--eagle DIR|FILE.gguf [--eagle-tree dynamic|SPEC] [--eagle-topk K] [--eagle-depth D] [--eagle-nodes N]]\n"
    "                                                                              an EAGLE draft layer\n"
    "           or [--speculate auto]: n-gram lookup and every drafter named above (else the heads and EAGLE\n"
    "           layer trained for the model in the cache), chosen step by step\n"
    "           [--fixed-shape]: draft the tree, gamma or n-gram length as given every step, instead of the\n"
    "           step controller's shape (what pays on this device and text, down to plain decoding)\n"
    "      print the prompt and its continuation, streamed as it is decoded; statistics on stderr (none\n"
    "      with --quiet). --validate: the Vulkan validation layer on (every command that opens the GPU)\n"
    "      --ctx-size: positions of the KV cache (default: prompt + N + 128, up to the model's context)\n"
    "      Every mode is the same loop: the drafter proposes a tree, one verify pass accepts from it\n"
    "  serve -m MODEL [--tokenizer FILE] [--host 127.0.0.1] [--port 8080] [--api-key KEY] [--parallel N]\n"
    "        [--cors ORIGIN[,ORIGIN..]|*] [--request-timeout 30]\n"
    "        [-c|--ctx-size N] [--chat-template NAME] [-n N] [--cpu] [--device N] [--validate] [--quiet]\n"
    "        and generate's drafter, sampling and acceptance flags: [--heads --num-heads --tree]\n"
    "        [--draft-model --gamma --adaptive-gamma --draft-tree] [--ngram --ngram-match --ngram-branches]\n"
    "        [--eagle --eagle-tree --eagle-topk --eagle-depth --eagle-nodes] [--speculate auto] [--fixed-shape]\n"
    "        [--temp --top-k --top-p --min-p --repeat-penalty --repeat-last-n --seed] [--accept --typical-eps --typical-delta]\n"
    "      an OpenAI-compatible HTTP server: POST /v1/completions and /v1/chat/completions (through the model's\n"
    "      chat template, or --chat-template's; none: plain \"User:\"/\"Assistant:\" lines), GET /v1/models[/ID] and\n"
    "      /health. Each reply's \"speculative\" object says how it was decoded; at temperature 0 its text is\n"
    "      what generate prints for the same flags.\n"
    "      A request's temperature, top_p, top_k, min_p, seed and max_tokens replace the flags' (-n: max_tokens)\n"
    "      --port 0: a free port; stderr says where it listens. --api-key: requests must send\n"
    "      \"Authorization: Bearer KEY\". --parallel N: requests held at once (8); the engine decodes one at a\n"
    "      time, the others wait in order, one more gets 503. Ctrl-C/SIGTERM: the running request stops, exit 0\n"
    "      --request-timeout S: a client has S seconds to send a whole request, or its connection is dropped\n"
    "      --cors: web pages of these origins may call it too; by default only pages of http://localhost and\n"
    "      http://127.0.0.1 (any port) may, since a page of any site could otherwise reach a local server\n"
    "  tree CHOICES.json|PRESET|dense:W,..|chain:N [--topk K]\n"
    "      the tree's buffers (tree_indices, position_ids, retrieve_indices, attn_mask) as JSON\n"
    "  tokenize -m MODEL (-p TEXT | --file FILE) [--bos] [--parse-special] [--tokenizer FILE]\n"
    "      the token ids of the text as one JSON array (no BOS unless --bos; --file reads bytes as they are)\n"
    "  info [-m MODEL | --synthetic NAME [--dtype TYPE]] [--tokenizer FILE] [--device N] [--validate]\n"
    "      list Vulkan devices; with -m, the model's configuration, tensor types, parameter count\n"
    "  bench (-m MODEL | --synthetic NAME [--dtype q8_0]) [--json FILE] [--plot FILE.png|svg] [--runs N] [--tokens N]\n"
    "        [--compare plain,medusa,eagle,draft,draft-tree,ngram,auto] [--prompts FILE.json] [-c|--ctx-size N]\n"
    "        [--tokenizer FILE] [--device N] [--validate] [--no-cpu] [--no-medusa] [--prompt-tokens N]\n"
    "        [--max-block N] [--kernel-layouts auto|gpu|cpu] and generate's drafter, sampling and acceptance\n"
    "        flags: [--heads --num-heads --tree] [--draft-model --gamma --adaptive-gamma --draft-tree]\n"
    "        [--ngram --ngram-match --ngram-branches] [--eagle DIR[,DIR] --eagle-tree --eagle-topk --eagle-depth --eagle-nodes]\n"
    "        [--speculate auto] [--fixed-shape] [--temp --top-k --top-p --min-p --repeat-penalty --repeat-last-n --seed]\n"
    "        [--accept --typical-eps --typical-delta]\n"
    "      prefill and decode tokens/s on the GPU and on the CPU reference, and decoding modes, side by side\n"
    "      --no-cpu: not the CPU reference; --no-medusa: not Medusa beside plain decoding; --prompt-tokens N:\n"
    "      the prompt timed (32); --max-block N: the largest verify block timed; --kernel-layouts: force the\n"
    "      shaders' layouts (auto: the device's choice)\n"
    "      --prompts: a JSON array of prompt strings, measured as a prompt set of its own beside the built-in ones\n"
    "      --position N: time the verify blocks (forward(T)/forward(1)) N positions into the cache (default:\n"
    "      after the prompt), where attention over the cached keys weighs more\n"
    "      --synthetic NAME --dtype q4_0,q8_0,q4_k,...: decode speed and weight GB/s of each type\n"
    "      --tune-kernels [--tune-out FILE]: time every matrix-kernel configuration (texel or storage reads,\n"
    "      workgroup sizes, output rows per subgroup on GPUs) on this device and keep the fastest for this\n"
    "      model's shapes (kernel-tuning.json)\n"
    "  train --objective heads|joint|eagle|eagle3 -m MODEL --out DIR [the objective's flags]\n"
    "      one training run on the model's own text: heads (Medusa-1), joint (Medusa-2), eagle (EAGLE-1/2) or\n"
    "      eagle3; each takes the flags of its old name: train-heads, train-heads --joint, train-eagle,\n"
    "      train-eagle --eagle3 (medusa help train-heads, medusa help train-eagle)\n"
    "  train-heads -m MODEL --heads K --out DIR [--steps N] [--seed S] [--resume] [--checkpoint-every N]\n"
    "        [--tokenizer FILE] [--sequences N] [--max-len N] [--batch B] [--lr LR] [--layers L] [--device N]\n"
    "        [--data-engine auto|cpu|gpu] [--validate]\n"
    "      train K Medusa heads on the model's own text (self-distillation) on the GPU; Ctrl-C stops after a\n"
    "      step with a checkpoint in DIR/checkpoint that --resume goes on from. The text is the model's own:\n"
    "      --sequences of up to --max-len tokens (256 each), written by --data-engine (auto: the CPU\n"
    "      reference on a CPU driver); --layers: residual blocks per head\n"
    "  train-heads --joint -m MODEL --heads K --out DIR [--init-heads DIR | --warmup-steps N] [--steps N]\n"
    "        [--lora-rank R] [--lora-alpha A] [--lambda L] [--lr LR] [--backbone-lr LR] [--seq-len T] [--batch-seqs S]\n"
    "        [--seed S] [--resume] [--checkpoint-every N] [--tokenizer FILE] [--sequences N] [--max-len N]\n"
    "        [--layers L] [--device N] [--data-engine auto|cpu|gpu] [--validate]\n"
    "      Medusa-2: LoRA on the backbone trained with the heads, KL to the original; writes the tuned model\n"
    "      (DIR/model.bin, llama2.c fp32, for a plain Llama; else DIR/model.gguf of its family) and DIR/heads\n"
    "  train-eagle -m MODEL --out DIR [--steps N] [--seed S] [--resume] [--lr LR] [--noise W] [--depth M]\n"
    "        [--token-weight W] [--eval-positions N] [--checkpoint-every N] [--tokenizer FILE] [--sequences N]\n"
    "        [--max-len N] [--batch B] [--device N] [--data-engine auto|cpu|gpu] [--validate]\n"
    "      train an EAGLE draft layer on the model's own text on the GPU; accuracy per draft depth\n"
    "      --token-weight: the token loss beside the feature loss; --eval-positions: held-out positions\n"
    "  train-eagle --eagle3 -m MODEL --out DIR [--layers A,B,C] [--draft-vocab N] [--ttt-steps K] [--steps N]\n"
    "        [--seed S] [--resume] [--lr LR] [--batch B] [--depth M] [--eval-positions N] [--checkpoint-every N]\n"
    "        [--tokenizer FILE] [--sequences N] [--max-len N] [--device N] [--data-engine auto|cpu|gpu] [--validate]\n"
    "      train an EAGLE-3 drafter with training-time test (each sequence unrolled K steps on the layer's own\n"
    "      outputs, 7 by default); --layers: the target layers whose inputs are fused (default 2, L/2, L-3);\n"
    "      --draft-vocab: its vocabulary, the most frequent tokens of the text (default: those covering 99%);\n"
    "      writes SafeAILab's layout (config.json, model.safetensors with d2t and t2d) and accuracy.json\n"
    "  tune-tree -m MODEL --heads DIR --out FILE.json [--plot FILE.png|svg] [--tokenizer FILE] [--sequences N]\n"
    "        [--seed S] [--min-nodes N] [--max-nodes N] [-c|--ctx-size N] [--device N] [--validate]\n"
    "      measure head accuracies, search the sparse tree per budget, time each budget, keep the fastest\n"
    "      (--min-nodes: at least that many nodes, for demonstrations)\n"
    "  plot BENCH.json|TREE.json OUT.png|OUT.svg\n"
    "      charts of a saved benchmark (tokens/s and tau per mode, forward(T)/forward(1)) or of a tuned tree\n"
    "  export-heads -m MODEL --heads FILE|DIR [--num-heads K] --out DIR [--layout medusa|tgi --base-model HF_ID]\n"
    "      Medusa heads of any layout read here (.safetensors, Medusa's .pt, legacy, vLLM) written for another tool\n"
    "  export-gguf -m MODEL | --synthetic NAME [--dtype TYPE] [--tokenizer FILE.model] --out FILE.gguf\n"
    "      the model as a GGUF llama file with its sentencepiece vocabulary, byte for byte: llama.cpp runs the\n"
    "      same weights (compare engines on one file)\n";

// The lines of kUsage about `cmd`: from its "  cmd ..." line to the next command's (train-heads
// has two entries, and both are kept).
std::string command_usage(const std::string& cmd) {
    std::string out;
    bool in = false;
    std::istringstream lines(kUsage);
    for (std::string line; std::getline(lines, line);) {
        if (line.size() > 2 && line.compare(0, 2, "  ") == 0 && line[2] != ' ')
            in = line.compare(2, cmd.size() + 1, cmd + " ") == 0 || line.substr(2) == cmd;
        if (in) out += line + "\n";
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
        (argc == 2 && !std::strcmp(argv[1], "help"))) {
        std::fputs(kUsage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!std::strcmp(argv[1], "--version") || !std::strcmp(argv[1], "version")) {
        std::printf("medusa %s\n", MEDUSA_VERSION);
        return 0;
    }
    // `medusa help COMMAND`, as `medusa COMMAND --help`.
    if (!std::strcmp(argv[1], "help")) {
        const std::string usage = command_usage(argv[2]);
        if (usage.empty()) {
            std::fprintf(stderr, "medusa help: no command '%s' (medusa --help lists them)\n",
                         medusa::terminal_safe(argv[2]).c_str());
            return 2;
        }
        std::fputs(("usage: medusa\n" + usage).c_str(), stdout);
        return 0;
    }
    const std::string cmd = argv[1];
    // `medusa COMMAND --help`: that command's part of the usage.
    if (argc > 2 && (!std::strcmp(argv[2], "--help") || !std::strcmp(argv[2], "-h"))) {
        if (const std::string usage = command_usage(cmd); !usage.empty()) {
            std::fputs(("usage: medusa\n" + usage).c_str(), stdout);
            return 0;
        }
    }
    try {
        if (cmd == "generate") return medusa::cli::run_generate(argc, argv);
        if (cmd == "serve") return medusa::cli::run_serve(argc, argv);
        if (cmd == "info") return medusa::cli::run_info(argc, argv);
        if (cmd == "bench") return medusa::cli::run_bench(argc, argv);
        if (cmd == "train" || cmd == "train-heads" || cmd == "train-eagle") return medusa::cli::run_train(argc, argv);
        if (cmd == "tune-tree") return medusa::cli::run_tune_tree(argc, argv);
        if (cmd == "tree") return medusa::cli::run_tree(argc, argv);
        if (cmd == "plot") return medusa::cli::run_plot(argc, argv);
        if (cmd == "tokenize") return medusa::cli::run_tokenize(argc, argv);
        if (cmd == "export-heads") return medusa::cli::run_export_heads(argc, argv);
        if (cmd == "export-gguf") return medusa::cli::run_export_gguf(argc, argv);
        std::fprintf(stderr, "medusa: unknown command '%s' (medusa --help lists the commands)\n",
                     medusa::terminal_safe(cmd).c_str());
        return 2;
    } catch (const medusa::cli::UsageError& e) {
        std::fprintf(stderr, "medusa %s: %s\n", cmd.c_str(), medusa::terminal_safe(e.what()).c_str());
        return 2;
    } catch (const medusa::Interrupted&) {
        std::fprintf(stderr, "medusa %s: interrupted\n", cmd.c_str());
        return medusa::kInterruptedExit;
    } catch (const std::bad_alloc&) {
        // Readers refuse what would not fit before allocating it; this is the last resort.
        std::fprintf(stderr, "medusa %s: error: out of memory\n", cmd.c_str());
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "medusa %s: error: %s\n", cmd.c_str(), medusa::terminal_safe(e.what()).c_str());
        return 1;
    }
}
