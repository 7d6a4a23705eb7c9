// `bench --prompts FILE`: the user's own prompts, a JSON array of strings, measured beside the
// built-in prompt sets.
#pragma once
#include <string>
#include <vector>

namespace medusa::cli {

constexpr size_t kMaxPrompts = 1000;

// The prompts of FILE: a JSON array of 1 to kMaxPrompts non-empty strings. Anything else throws
// FormatError naming the file and the entry ("prompts.json: prompt 3 is a number, not a string").
std::vector<std::string> read_prompts_file(const std::string& path);

}  // namespace medusa::cli
