// Byte-level BPE: text is cut into words by the pre-tokenizer, each word's bytes are written in
// GPT-2's byte-to-unicode alphabet, and adjacent symbols are merged lowest merge rank first until
// no listed merge applies. Decoding maps the alphabet back to bytes.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/bpe_vocab.h"
#include "model/pretokenizer.h"
#include "model/special_tokens.h"

namespace medusa {

class BpeTokenizer {
public:
    // Validates the vocabulary; throws FormatError naming `source`. `rstrip`: the special tokens
    // (ids, ascending) after which whitespace is dropped (EmbeddedVocab::rstrip).
    BpeTokenizer(std::shared_ptr<const BpeVocab> vocab, const std::string& source,
                 const std::vector<int32_t>& rstrip = {});

    // No BOS/EOS. parse_special: control tokens written in the text become their ids (user-defined
    // tokens always do, as in llama.cpp; both as llama.cpp types them: llama_cpp_token_types).
    std::vector<int> encode(std::string_view text, bool parse_special) const;
    // The bytes a token stands for: normal tokens decoded from the alphabet, user-defined ones as
    // written, control, unknown and unused tokens nothing (types as llama.cpp takes them).
    std::string token_bytes(int id) const;
    int find(const std::string& token_text) const;  // -1 when absent
    const BpeVocab& vocab() const { return *vocab_; }

private:
    void encode_word(std::string_view word, std::vector<int>& out) const;
    int rank(std::string_view left, std::string_view right) const;

    std::shared_ptr<const BpeVocab> vocab_;
    PreTokenizer pre_;
    std::vector<int32_t> types_;  // llama.cpp's types (llama_cpp_token_types), one per token
    std::unordered_map<std::string, int> ids_;
    std::unordered_map<std::string, int> ranks_;  // "left right" -> rank
    std::vector<SpecialToken> user_defined_, control_;
};

// GPT-2's alphabet: the UTF-8 text of the character byte b is written as, and the reverse.
const std::string& byte_to_unicode(uint8_t b);
// The bytes of text in the alphabet; characters outside it are kept as they are.
std::string unicode_to_bytes(std::string_view text);

}  // namespace medusa
