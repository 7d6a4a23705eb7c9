// medusa-chat's command line: the flags, checked (a value out of range is one line naming the
// flag, exit code 2), over the settings a session starts from. The decoding mode is the one a
// flag names whatever the order: --auto or --plain wins over the drafter flags, which set their
// drafter's files and numbers; among drafter flags the last names the mode.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include "decode_settings.h"

namespace medusa::chat {

struct Options {
    std::string prompt = "Once upon a time";
    bool prompt_given = false;  // interactive: send it at start
    int steps = 12;
    std::string screenshot;
    bool smoke = false;
    int width = 1440, height = 880;
    std::string show = "last";  // which step the screenshot's tree shows: last, best or rejection
    bool all_nodes = false;     // the tree panel draws every node, not the accepted view
    bool mask = false;          // the tree panel shows the attention mask beside the tree
    std::vector<std::string> recent_models;  // from the saved state
    bool measure = false;       // the screenshot also shows "measure speedup vs plain"
    std::string charts;         // a benchmark JSON to chart; opens the metrics panel's charts tab
    DecodeSettings settings;
    bool size_chosen = false;
    std::string accept;
    bool scripted() const { return smoke || !screenshot.empty(); }
};

// A flag the app cannot take: exit code 2, as the command line's usage errors.
struct FlagError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// `start`: the settings to begin from (the saved ones in interactive use); flags override them.
// --help and --version print and exit 0.
Options parse_flags(int argc, char** argv, const Options& start);
// Scripted runs (--screenshot, --smoke) start from the defaults; interactive ones from the saved state.
bool scripted_args(int argc, char** argv);

}  // namespace medusa::chat
