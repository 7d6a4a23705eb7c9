#include "chat_prompt.h"

#include <cstdio>

namespace medusa::cli {

ChatTemplateDetection chosen_chat_template(const Args& args, const ModelFile& file) {
    if (!args.has("--chat-template")) return detect_chat_template(file);
    const auto t = parse_chat_template(args.str("--chat-template"));
    if (!t) throw UsageError("unknown --chat-template '" + args.str("--chat-template") + "' (known: " +
                             chat_template_names(", ") + ")");
    return {*t, "--chat-template", true};
}

ChatSetup setup_chat(const Args& args, const ModelFile& file, const Tokenizer& tok, const std::string& prompt) {
    ChatSetup s;
    const bool chat = args.has("--chat") || args.has("--chat-template");
    if (!chat && args.has("--system")) throw UsageError("--system needs --chat (or --chat-template NAME)");
    std::string why;
    if (chat) {
        const ChatTemplateDetection d = chosen_chat_template(args, file);
        s.kind = d.kind;
        why = d.reason;
    }
    if (s.kind == ChatTemplate::None) {
        if (chat)
            std::fprintf(stderr,
                         "note: no chat template (%s); continuing the prompt as plain text. Force one with "
                         "--chat-template %s\n",
                         why.c_str(), chat_template_names("|").c_str());
        s.shown = prompt;
        s.tokens = tok.encode(prompt, true);
        return s;
    }
    Conversation conv;
    conv.system = args.has("--system") ? args.str("--system") : default_system_prompt(s.kind);
    conv.user = prompt;
    const ChatPrompt p = render_chat(s.kind, conv);
    s.shown = p.text();
    s.tokens = encode_chat(p, tok);
    s.stop_tokens = chat_stop_tokens(s.kind, tok);
    s.stop_strings = chat_stop_strings(s.kind);
    if (!args.has("--quiet"))
        std::fprintf(stderr, "chat template: %s (%s), %zu prompt tokens\n", chat_template_name(s.kind), why.c_str(),
                     s.tokens.size());
    return s;
}

}  // namespace medusa::cli
