// `bench --prompts FILE`: the user's own prompts, a JSON array of strings, measured beside the
// built-in prompt sets.
#pragma once
#include <string>
#include <vector>

#include "model/tokenizer.h"

namespace medusa::cli {

constexpr size_t kMaxPrompts = 1000;

// The prompts of FILE: a JSON array of 1 to kMaxPrompts non-empty strings. Anything else throws
// FormatError naming the file and the entry ("prompts.json: prompt 3 is a number, not a string").
std::vector<std::string> read_prompts_file(const std::string& path);

// Before any is tokenized (tokenizing takes a hundred bytes of memory per byte of text, or more):
// throws UsageError "PATH: prompt N has B bytes: more than the context of C positions holds ..."
// for the first prompt longer than the context's room spells: `context` positions less
// `reserved` (what `reserved_for` says takes them), Tokenizer::longest_token_bytes a token.
void check_prompt_bytes(const std::vector<std::string>& prompts, const std::string& path, const Tokenizer& tok,
                        int context, int reserved, const std::string& reserved_for);

}  // namespace medusa::cli
