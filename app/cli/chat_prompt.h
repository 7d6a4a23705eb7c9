// `medusa generate --chat`: the prompt the model's chat template makes of -p (and --system).
#pragma once
#include <string>
#include <vector>

#include "args.h"
#include "model/chat_template.h"
#include "model/model_file.h"
#include "model/tokenizer.h"

namespace medusa::cli {

struct ChatSetup {
    ChatTemplate kind = ChatTemplate::None;  // None: -p is continued as plain text
    std::string shown;                       // what stdout prints before the reply
    std::vector<int> tokens;                 // the prompt's tokens, BOS first
    std::vector<int> stop_tokens;            // to add to the decoder's
    std::vector<std::string> stop_strings;   // for StopStringFilter
};

// --chat-template NAME's template, else the one the model file names (detect_chat_template).
ChatTemplateDetection chosen_chat_template(const Args& args, const ModelFile& file);

// --chat: the template detected from the model file; --chat-template NAME forces one (and implies
// --chat); --system TEXT replaces the family's default system prompt. Without a template the
// prompt is continued as it is, with a note on stderr saying why.
ChatSetup setup_chat(const Args& args, const ModelFile& file, const Tokenizer& tok, const std::string& prompt);

}  // namespace medusa::cli
