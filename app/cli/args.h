// A small command-line parser: `--name value`, `--flag`, and short aliases (-m, -p, -n, -s, -c).
#pragma once
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "command_flags.h"

namespace medusa::cli {

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class Args {
public:
    // `flags` take no value; every other option takes exactly one.
    Args(int argc, char** argv, int first, const std::set<std::string>& flags, const std::set<std::string>& options);
    // A command's own table (command_flags.h).
    Args(int argc, char** argv, int first, const CommandFlags& table)
        : Args(argc, argv, first, table.flags, table.options) {}
    bool has(const std::string& name) const { return values_.count(name) > 0; }
    std::string str(const std::string& name, const std::string& fallback = "") const;
    int integer(const std::string& name, int fallback) const;
    float number(const std::string& name, float fallback) const;
    const std::vector<std::string>& positional() const { return positional_; }
    // Sets an option as if it had been given (bench runs one mode with several settings).
    void set(const std::string& name, const std::string& value) { values_[name] = value; }

private:
    // The option as the user typed it (-n for --n-predict): messages name what was written.
    std::string spelled(const std::string& name) const;
    std::map<std::string, std::string> values_;
    std::map<std::string, std::string> spelling_;
    std::vector<std::string> positional_;
};

}  // namespace medusa::cli
