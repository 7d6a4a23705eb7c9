#include "command_line.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "number_text.h"

namespace medusa::chat {

namespace {

// A whole number within [lo, hi], or an error naming the flag and what it got.
int whole_number(const std::string& flag, const std::string& v, int lo, int hi) {
    size_t used = 0;
    int n = 0;
    try {
        n = std::stoi(v, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != v.size() || v.empty() || n < lo || n > hi)
        throw FlagError(flag + " expects a whole number from " + std::to_string(lo) + " to " +
                                 std::to_string(hi) + ", got '" + v + "'");
    return n;
}

float real_number(const std::string& flag, const std::string& v, float lo, float hi) {
    const std::optional<float> x = parse_finite_float(v);
    if (!x || *x < lo || *x > hi)
        throw FlagError(flag + " expects a number from " + std::to_string(lo).substr(0, 4) + " to " +
                                 std::to_string(hi).substr(0, 4) + ", got '" + v + "'");
    return *x;
}

// The flags read one by one: the current one, and its value where it takes one.
struct FlagReader {
    int argc;
    char** argv;
    int i = 0;
    std::string flag;
    bool next() { return ++i < argc && (flag = argv[i], true); }
    std::string value() {
        if (i + 1 >= argc) throw FlagError(flag + " needs a value");
        return argv[++i];
    }
};

// What the flags named, settled once all are read: the mode (--plain and --auto over any drafter
// flag, else the last drafter flag) and the chat template for the model the flags name, whatever
// their order.
struct Named {
    std::optional<DrafterKind> chosen, drafter;
    std::optional<std::string> chat_template;
};

// The window's and the scripted runs' flags; false: the flag is none of them.
bool take_run_flag(Options& o, FlagReader& f) {
    if (f.flag == "--prompt") o.prompt = f.value(), o.prompt_given = true;
    else if (f.flag == "--steps") o.steps = whole_number(f.flag, f.value(), 1, 100000);
    else if (f.flag == "--screenshot") o.screenshot = f.value();
    else if (f.flag == "--smoke") o.smoke = true;
    else if (f.flag == "--size") {
        const std::string v = f.value();
        const size_t x = v.find('x');
        if (x == std::string::npos) throw FlagError("--size expects WIDTHxHEIGHT, got '" + v + "'");
        o.width = whole_number("--size", v.substr(0, x), 320, 8192);
        o.height = whole_number("--size", v.substr(x + 1), 240, 8192);
        o.size_chosen = true;
    } else if (f.flag == "--show") o.show = f.value();
    else if (f.flag == "--all-nodes") o.all_nodes = true;
    else if (f.flag == "--mask") o.mask = true;
    else if (f.flag == "--measure") o.measure = true;
    else if (f.flag == "--charts") o.charts = f.value();
    else return false;
    return true;
}

// The model's, the drafters' and the sampling's flags; false: the flag is none of them.
bool take_decoding_flag(Options& o, Named& named, FlagReader& f) {
    DecodeSettings& s = o.settings;
    if (f.flag == "--model" || f.flag == "-m") s.model_path = f.value();
    else if (f.flag == "--tokenizer") s.tokenizer_path = f.value();
    else if (f.flag == "--heads") set_heads_field(s, f.value()), named.drafter = DrafterKind::Medusa;
    else if (f.flag == "--tree") set_tree_field(s, f.value()), named.drafter = DrafterKind::Medusa;
    else if (f.flag == "--plain") named.chosen = DrafterKind::Plain;
    else if (f.flag == "--auto") named.chosen = DrafterKind::Auto;
    else if (f.flag == "--fixed-shape") s.fixed_shape = true;
    else if (f.flag == "--draft-model") s.draft.model = f.value(), named.drafter = DrafterKind::DraftModel;
    else if (f.flag == "--gamma") s.draft.gamma = whole_number(f.flag, f.value(), 1, 16), named.drafter = DrafterKind::DraftModel;
    else if (f.flag == "--adaptive-gamma") s.draft.adaptive_gamma = true, named.drafter = DrafterKind::DraftModel;
    else if (f.flag == "--draft-tree") s.draft.branches = whole_number(f.flag, f.value(), 1, 8), named.drafter = DrafterKind::DraftModel;
    else if (f.flag == "--ngram") s.ngram.max_tokens = whole_number(f.flag, f.value(), 1, 127), named.drafter = DrafterKind::Ngram;
    else if (f.flag == "--eagle") s.eagle.layer = f.value(), named.drafter = DrafterKind::Eagle;
    else if (f.flag == "--eagle-tree") s.eagle.tree = parse_eagle_tree(f.value()), named.drafter = DrafterKind::Eagle;
    else if (f.flag == "--accept") o.accept = f.value();
    else if (f.flag == "--chat-template") named.chat_template = f.value();
    else if (f.flag == "--temp") s.sampling.temperature = real_number(f.flag, f.value(), 0.0f, 10.0f);
    else if (f.flag == "--top-k") s.sampling.top_k = whole_number(f.flag, f.value(), 0, 1000000);
    else if (f.flag == "--top-p") s.sampling.top_p = real_number(f.flag, f.value(), 0.01f, 1.0f);
    else if (f.flag == "--min-p") s.sampling.min_p = real_number(f.flag, f.value(), 0.0f, 0.5f);
    else if (f.flag == "--repeat-penalty") s.sampling.repeat_penalty = real_number(f.flag, f.value(), 0.01f, 10.0f);
    else if (f.flag == "--seed") s.sampling.seed = uint64_t(whole_number(f.flag, f.value(), 0, 2147483647));
    else if (f.flag == "--ctx-size" || f.flag == "-c") s.ctx_size = whole_number("--ctx-size", f.value(), 1, 1 << 24);
    else return false;
    return true;
}

[[noreturn]] void print_help() {
    std::puts("medusa-chat [-m|--model F] [--tokenizer F] [--heads F] [--tree SPEC] [--plain] [--accept RULE]\n"
              "            [--draft-model F] [--gamma N] [--adaptive-gamma] [--draft-tree K] [--ngram N]\n"
              "            [--eagle DIR [--eagle-tree dynamic|SPEC]] [--auto] [--fixed-shape]\n"
              "            [--temp T] [--top-k K] [--top-p P] [--min-p P] [--repeat-penalty R] [--seed N] [--size WxH]\n"
              "            [-c|--ctx-size N] [--chat-template NAME]\n"
              "  --ctx-size     positions of the KV cache (default: the model's context, at most 4096;\n"
              "      more than the model's context is allowed, with a warning)\n"
              "  --chat-template NAME   speak to the model in this format (chatml, llama3, llama2_chat, zephyr,\n"
              "      vicuna_v1.1, or none: continue the text), where it has none or the wrong one; kept for it\n"
              "  --draft-model, --gamma, --adaptive-gamma, --draft-tree select draft-model speculative decoding,\n"
              "      --ngram n-gram lookup, --eagle EAGLE's draft layer, --heads/--tree Medusa;\n"
              "      --accept greedy|typical|sample in every mode; --auto chooses among every drafter it has\n"
              "      files for, step by step (--plain and --auto name the mode wherever the drafter flags stand);\n"
              "      a picked mode drafts every step, shaped by the step controller; --fixed-shape drafts the\n"
              "      mode's own tree, gamma or n-gram length every step instead\n"
              "  the settings of the last session come back from ${XDG_CONFIG_HOME:-~/.config}/medusa-vk/;\n"
              "      flags override them\n"
              "  without --heads/--tree, a model uses the heads and tuned tree scripts/train_default_heads.sh\n"
              "      trained for it, when ${MEDUSA_CACHE:-~/.cache/medusa-vk} holds them (found by the model's\n"
              "      content, whatever its path; the status line names them); --heads init: untrained heads\n"
              "  --prompt TEXT  start decoding TEXT at once; Ctrl-C in the terminal closes the window, settings saved\n"
              "  --prompt TEXT --steps N --screenshot FILE.png [--show last|best|rejection]   decode N steps, save the\n"
              "                 window (rejection: the latest step with a rejected draft token)\n"
              "  --all-nodes    the tree panel starts with every node drawn (zoom and scroll)\n"
              "  --mask         the tree panel starts with the attention mask beside the tree\n"
              "  --measure      before the screenshot, measure the speedup against plain decoding\n"
              "  --charts BENCH.json   chart a `medusa bench --json` result in the metrics panel's charts tab\n"
              "  --smoke        load, generate, stop, clear, generate again, quit; fails on validation messages\n"
              "  (--screenshot and --smoke neither read nor write the saved settings, nor save chats)\n"
              "Chats are saved after every reply in ${MEDUSA_CHATS:-${XDG_DATA_HOME:-~/.local/share}/medusa-vk/chats};\n"
              "the Chats button lists them to reopen, search, rename, delete or export.");
    std::exit(0);
}

// The mode, chat template and acceptance rule the flags named, into the settings.
void settle_named(Options& o, const Named& named) {
    if (named.chosen || named.drafter) o.settings.mode = named.chosen ? *named.chosen : *named.drafter;
    if (named.chat_template) {
        if (!parse_chat_template(*named.chat_template))
            throw FlagError("--chat-template: unknown '" + *named.chat_template +
                            "' (known: " + chat_template_names(", ") + ")");
        o.settings.chat_templates[o.settings.model_path] = *named.chat_template;
    }
    if (!o.accept.empty()) {
        try {
            o.settings.rule = parse_accept_rule(o.accept);
        } catch (const std::invalid_argument& e) {
            throw FlagError(std::string("--accept: ") + e.what());
        }
    }
}

}  // namespace

Options parse_flags(int argc, char** argv, const Options& start) {
    Options o = start;
    Named named;
    for (FlagReader f{argc, argv}; f.next();) {
        if (take_run_flag(o, f) || take_decoding_flag(o, named, f)) continue;
        if (f.flag == "--help" || f.flag == "-h") print_help();
        if (f.flag == "--version") {
            std::printf("medusa-chat %s\n", MEDUSA_VERSION);
            std::exit(0);
        }
        throw FlagError("unknown argument " + f.flag + " (see --help)");
    }
    settle_named(o, named);
    return o;
}

bool scripted_args(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        if (!std::strcmp(argv[i], "--screenshot") || !std::strcmp(argv[i], "--smoke")) return true;
    return false;
}

}  // namespace medusa::chat
