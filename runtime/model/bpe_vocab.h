// A byte-level BPE vocabulary (GPT-2's scheme, used by Llama 3, Qwen2, SmolLM, StarCoder, ...):
// token texts written in GPT-2's byte-to-unicode alphabet ("Ġthe"), their llama.cpp token types,
// the merges in rank order, and how text is cut into words before merging.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace medusa {

// llama.cpp token types (GGUF tokenizer.ggml.token_type).
enum TokenType : int32_t { kTokenNormal = 1, kTokenUnknown = 2, kTokenControl = 3, kTokenUserDefined = 4, kTokenUnused = 5, kTokenByte = 6 };

struct BpeVocab {
    std::vector<std::string> tokens;
    std::vector<int32_t> types;       // one per token; 0 (undefined) counts as normal
    std::vector<std::string> merges;  // "left right", best (lowest rank) first
    std::string pre;                  // pre-tokenizer: a GGUF tokenizer.ggml.pre name, or "regex" for `regexes`
    std::vector<std::string> regexes; // the word-splitting regexes, applied in order (from `pre` or tokenizer.json)
    bool ignore_merges = false;       // a word that is itself a token is emitted whole (Llama 3)
    int bos = -1, eos = -1;           // -1: none
    bool add_bos = false;             // the model's prompts start with BOS

    bool operator==(const BpeVocab&) const = default;
};

// Checks sizes, ids and merges against the tokens; throws FormatError "<name>: <problem>".
void validate_bpe_vocab(const BpeVocab& v, const std::string& name);

// The vocabulary a model file carries: a sentencepiece model ("llama" GGUF vocabularies) or a
// byte-level BPE ("gpt2" GGUF vocabularies, Hugging Face tokenizer.json). Empty: none.
struct EmbeddedVocab {
    std::string sentencepiece;            // a serialized sentencepiece ModelProto
    std::shared_ptr<const BpeVocab> bpe;
    // Sentencepiece pieces that the file types unknown besides the unknown token (Phi-3's padding):
    // never produced from text, but cut out of it as specials when special tokens are parsed, as
    // llama.cpp does. Ids, ascending.
    std::vector<int32_t> unknown;
    // Special tokens after which whitespace is dropped when they are cut out of text (llama.cpp
    // does so for the specials of models named Phi-3: llama_cpp_rstrip_tokens; a Hugging Face
    // folder marks them "rstrip"). Ids, ascending. It follows the model's name or the folder's
    // added tokens, not the vocabulary, so operator== does not compare it.
    std::vector<int32_t> rstrip;
    bool empty() const { return sentencepiece.empty() && !bpe; }
    bool operator==(const EmbeddedVocab& o) const {
        return sentencepiece == o.sentencepiece && (bpe == o.bpe || (bpe && o.bpe && *bpe == *o.bpe)) &&
               unknown == o.unknown;
    }
};

}  // namespace medusa
