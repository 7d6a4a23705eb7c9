// Turns a GGUF vocabulary (tokenizer.ggml.model == "llama") into a serialized sentencepiece
// ModelProto, so one tokenizer implementation serves .model files and GGUF files alike.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace medusa {

struct GgufVocab {
    std::vector<std::string> tokens;
    std::vector<float> scores;   // empty: all 0
    std::vector<int32_t> types;  // llama.cpp token types = sentencepiece piece types: 1 normal, 2 unknown,
                                 // 3 control, 4 user defined, 5 unused, 6 byte (0 undefined: normal); empty: all normal
    int bos = 1, eos = 2, unk = 0;
};

// Checks the vocabulary (sizes agree, ids in range, pieces non-empty and unique, one unknown piece)
// and writes the ModelProto bytes. Throws FormatError "<name>: ..." on a bad vocabulary.
std::string sentencepiece_proto_from_vocab(const GgufVocab& v, const std::string& name);

}  // namespace medusa
