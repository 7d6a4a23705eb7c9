// Cuts text into the words a byte-level BPE merges within, with the regexes of the model's
// pre-tokenizer (PCRE2, Unicode properties from the library, not tables of our own). Each regex
// splits every piece the previous ones left: matches become words, and so do the gaps between them.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace medusa {

class PreTokenizer {
public:
    // Throws FormatError "<source>: ..." for a regex PCRE2 cannot compile.
    PreTokenizer(const std::vector<std::string>& regexes, const std::string& source);
    ~PreTokenizer();
    PreTokenizer(PreTokenizer&&) noexcept;
    PreTokenizer& operator=(PreTokenizer&&) noexcept;

    // `text` must be valid UTF-8 (see sanitize_utf8). Words are substrings of it, in order.
    std::vector<std::string_view> split(std::string_view text) const;

private:
    struct Compiled;
    std::vector<std::unique_ptr<Compiled>> regexes_;
    std::string source_;
};

// The regexes llama.cpp uses for a GGUF tokenizer.ggml.pre name, and whether that tokenizer
// emits a word that is itself a token whole (ignore_merges). Throws FormatError naming `source`
// and the supported names for any other.
std::vector<std::string> gguf_pre_tokenizer_regexes(const std::string& pre, bool& ignore_merges,
                                                    const std::string& source);
// GPT-2's word regex (Hugging Face's ByteLevel pre-tokenizer with use_regex).
const std::string& gpt2_regex();

// `text` with every byte that does not start a well-formed UTF-8 sequence replaced by U+FFFD,
// as llama.cpp reads text before splitting it.
std::string sanitize_utf8(std::string_view text);

}  // namespace medusa
