// Turns a GGUF vocabulary (tokenizer.ggml.*) into a serialized sentencepiece ModelProto,
// so one tokenizer implementation serves .model files and GGUF files alike.
#pragma once
#include <string>
#include <vector>

namespace medusa {

struct GgufVocab {
    std::vector<std::string> tokens;
    std::vector<float> scores;
    std::vector<int32_t> types;  // sentencepiece piece types: 1 normal, 2 unknown, 3 control, 6 byte ...
    int bos = 1, eos = 2, unk = 0;
};

std::string sentencepiece_proto_from_vocab(const GgufVocab& v);

}  // namespace medusa
