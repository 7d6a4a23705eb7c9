// Every command's options, as its parser accepts them: `flags` take no value, `options` one. The
// commands parse with these tables, and a test checks that `medusa COMMAND --help` names each.
#pragma once
#include <map>
#include <set>
#include <string>

namespace medusa::cli {

struct CommandFlags {
    std::set<std::string> flags, options;
};

// By command; "train-heads --joint" is Medusa-2's training, parsed apart from train-heads.
const std::map<std::string, CommandFlags>& command_flags();
const CommandFlags& flags_of(const std::string& command);

}  // namespace medusa::cli
