// The vocabulary a GGUF file carries: tokenizer.ggml.model "llama" is turned into a serialized
// sentencepiece ModelProto (so one implementation serves .model files and GGUF files alike),
// "gpt2" into a byte-level BPE vocabulary with llama.cpp's pre-tokenizer for tokenizer.ggml.pre.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/bpe_vocab.h"

namespace medusa {

class GgufMetadata;

struct GgufVocab {
    std::vector<std::string> tokens;
    std::vector<float> scores;   // empty: all 0
    std::vector<int32_t> types;  // llama.cpp token types = sentencepiece piece types: 1 normal, 2 unknown,
                                 // 3 control, 4 user defined, 5 unused, 6 byte (0 undefined: normal); empty: all normal
    int bos = 1, eos = 2, unk = 0;
    bool add_space_prefix = true;  // a space goes in front of the text (tokenizer.ggml.add_space_prefix;
                                   // Gemma's vocabularies say false)
};

// Checks the vocabulary (sizes agree, ids in range, pieces non-empty and unique, one unknown piece)
// and writes the ModelProto bytes. Throws FormatError "<name>: ..." on a bad vocabulary.
std::string sentencepiece_proto_from_vocab(const GgufVocab& v, const std::string& name);

// A sentencepiece vocabulary as llama.cpp tokenizes it: its tokens retyped by their text as
// llama.cpp retypes them (llama_cpp_token_types), the ModelProto, and the pieces typed unknown
// besides the unknown token. rstrip is left empty. Throws FormatError "<name>: ..." as above.
EmbeddedVocab embed_sentencepiece_vocab(GgufVocab v, const std::string& name);

// The vocabulary under the file's tokenizer.ggml.* keys; throws FormatError naming `name` for
// tokenizer models other than "llama" and "gpt2" and for malformed vocabularies.
EmbeddedVocab read_gguf_vocab(const GgufMetadata& meta, const std::string& name);
// The vocabulary of a GGUF file, which may hold no model at all (llama.cpp's vocab-only files).
EmbeddedVocab load_gguf_vocab(const std::vector<uint8_t>& bytes, const std::string& name);

}  // namespace medusa
