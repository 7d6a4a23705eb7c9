// Special tokens written in text ("<|im_start|>", "<think>") are cut out before the tokenizer sees
// the rest, as llama.cpp and Hugging Face do: the longest special first, each out of what the
// longer ones left.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace medusa {

struct SpecialToken {
    std::string text;
    int id;
};

struct TextFragment {
    int token = -1;         // >= 0: this fragment is that special token
    std::string_view text;  // otherwise: plain text to tokenize
};

// `specials` in any order (they are tried longest first). Fragments are in text order.
std::vector<TextFragment> split_special_tokens(std::string_view text, std::vector<SpecialToken> specials);

}  // namespace medusa
