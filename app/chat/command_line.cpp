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

}  // namespace

Options parse_flags(int argc, char** argv, const Options& start) {
    Options o = start;
    // The mode a flag named: --plain and --auto over any drafter flag, else the last drafter flag.
    std::optional<DrafterKind> chosen, drafter;
    std::optional<std::string> chat_template;  // for the model the flags name, whatever their order
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw FlagError(a + " needs a value");
            return argv[++i];
        };
        DecodeSettings& s = o.settings;
        if (a == "--prompt") o.prompt = value(), o.prompt_given = true;
        else if (a == "--steps") o.steps = whole_number(a, value(), 1, 100000);
        else if (a == "--screenshot") o.screenshot = value();
        else if (a == "--smoke") o.smoke = true;
        else if (a == "--size") {
            const std::string v = value();
            const size_t x = v.find('x');
            if (x == std::string::npos) throw FlagError("--size expects WIDTHxHEIGHT, got '" + v + "'");
            o.width = whole_number("--size", v.substr(0, x), 320, 8192);
            o.height = whole_number("--size", v.substr(x + 1), 240, 8192);
            o.size_chosen = true;
        } else if (a == "--show") o.show = value();
        else if (a == "--all-nodes") o.all_nodes = true;
        else if (a == "--mask") o.mask = true;
        else if (a == "--measure") o.measure = true;
        else if (a == "--charts") o.charts = value();
        else if (a == "--model" || a == "-m") s.model_path = value();
        else if (a == "--tokenizer") s.tokenizer_path = value();
        else if (a == "--heads") set_heads_field(s, value()), drafter = DrafterKind::Medusa;
        else if (a == "--tree") set_tree_field(s, value()), drafter = DrafterKind::Medusa;
        else if (a == "--plain") chosen = DrafterKind::Plain;
        else if (a == "--auto") chosen = DrafterKind::Auto;
        else if (a == "--fixed-shape") s.fixed_shape = true;
        else if (a == "--draft-model") s.draft.model = value(), drafter = DrafterKind::DraftModel;
        else if (a == "--gamma") s.draft.gamma = whole_number(a, value(), 1, 16), drafter = DrafterKind::DraftModel;
        else if (a == "--adaptive-gamma") s.draft.adaptive_gamma = true, drafter = DrafterKind::DraftModel;
        else if (a == "--draft-tree") s.draft.branches = whole_number(a, value(), 1, 8), drafter = DrafterKind::DraftModel;
        else if (a == "--ngram") s.ngram.max_tokens = whole_number(a, value(), 1, 127), drafter = DrafterKind::Ngram;
        else if (a == "--eagle") s.eagle.layer = value(), drafter = DrafterKind::Eagle;
        else if (a == "--eagle-tree") s.eagle.tree = parse_eagle_tree(value()), drafter = DrafterKind::Eagle;
        else if (a == "--accept") o.accept = value();
        else if (a == "--chat-template") chat_template = value();
        else if (a == "--temp") s.sampling.temperature = real_number(a, value(), 0.0f, 10.0f);
        else if (a == "--top-k") s.sampling.top_k = whole_number(a, value(), 0, 1000000);
        else if (a == "--top-p") s.sampling.top_p = real_number(a, value(), 0.01f, 1.0f);
        else if (a == "--min-p") s.sampling.min_p = real_number(a, value(), 0.0f, 0.5f);
        else if (a == "--repeat-penalty") s.sampling.repeat_penalty = real_number(a, value(), 0.01f, 10.0f);
        else if (a == "--seed") s.sampling.seed = uint64_t(whole_number(a, value(), 0, 2147483647));
        else if (a == "--ctx-size" || a == "-c") s.ctx_size = whole_number("--ctx-size", value(), 1, 1 << 24);
        else if (a == "--help" || a == "-h") {
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
        } else if (a == "--version") {
            std::printf("medusa-chat %s\n", MEDUSA_VERSION);
            std::exit(0);
        } else throw FlagError("unknown argument " + a + " (see --help)");
    }
    if (chosen || drafter) o.settings.mode = chosen ? *chosen : *drafter;
    if (chat_template) {
        if (!parse_chat_template(*chat_template))
            throw FlagError("--chat-template: unknown '" + *chat_template + "' (known: " + chat_template_names(", ") + ")");
        o.settings.chat_templates[o.settings.model_path] = *chat_template;
    }
    if (!o.accept.empty()) {
        try {
            o.settings.rule = parse_accept_rule(o.accept);
        } catch (const std::invalid_argument& e) {
            throw FlagError(std::string("--accept: ") + e.what());
        }
    }
    return o;
}

bool scripted_args(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        if (!std::strcmp(argv[i], "--screenshot") || !std::strcmp(argv[i], "--smoke")) return true;
    return false;
}

}  // namespace medusa::chat
