// Checks a serialized sentencepiece ModelProto before libsentencepiece sees it. sentencepiece
// trusts the normalization rules a model carries (precompiled_charsmap: a darts-clone trie and the
// strings it maps to) and follows their offsets wherever they point, so a malformed one reads out
// of bounds on the first text it normalizes; and it parses any number of pieces.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/special_tokens.h"

namespace medusa {

// Throws FormatError "<source>: ..." for a ModelProto whose protobuf framing is broken, with more
// than 1<<20 pieces, or with a precompiled_charsmap (normalizer or denormalizer) that
// sentencepiece 0.1.97 would read out of bounds: the first problem, in one line.
void check_sentencepiece_proto(std::string_view proto, const std::string& source);

// What the engine needs of a ModelProto that libsentencepiece does not report: its user-defined
// pieces (text and id, in id order), which the engine cuts out of text itself as llama.cpp does,
// and whether its normalizer puts a space in front of the text (add_dummy_prefix). For a proto
// that check_sentencepiece_proto passed; throws std::invalid_argument on broken framing.
struct SentencepieceExtras {
    std::vector<SpecialToken> user_defined;
    bool add_dummy_prefix = true;
};
SentencepieceExtras read_sentencepiece_extras(std::string_view proto);

// A ModelProto's pieces in id order, whether its normalizer puts a space in front of the text,
// and its trainer's unknown, BOS and EOS ids (sentencepiece's defaults 0, 1, 2 where unsaid): what
// llama.cpp's converter reads of a Hugging Face folder's tokenizer.model. For a proto that
// check_sentencepiece_proto passed; throws std::invalid_argument on broken framing.
struct SentencepiecePiece {
    std::string text;
    float score = 0.0f;
    int32_t type = 1;  // 1 normal, 2 unknown, 3 control, 4 user defined, 5 unused, 6 byte
};
struct SentencepieceVocab {
    std::vector<SentencepiecePiece> pieces;
    bool add_dummy_prefix = true;
    int32_t unk = 0, bos = 1, eos = 2;
};
SentencepieceVocab read_sentencepiece_vocab(std::string_view proto);

// The check of one precompiled_charsmap blob; "" when sentencepiece can use it safely, otherwise
// what is wrong with it.
std::string precompiled_charsmap_problem(std::string_view blob);

}  // namespace medusa
