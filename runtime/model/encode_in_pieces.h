// Tokenizing a long text a piece at a time: tokenizers take a hundred bytes of memory or more per
// byte of text, so a 20 MB file tokenized whole took 4.6 GB. The text is cut where a line ends or
// a word begins, and each cut is checked: the last words before it tokenize the same at the end of
// the piece, on their own and before the next words, so the pieces' tokens are the whole text's
// (sentencepiece and byte-level BPE both join characters across a cut that is not such a place).
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "model/tokenizer.h"

namespace medusa {

constexpr size_t kEncodePieceBytes = size_t(64) << 10;

// The ids of tok.encode(text, add_bos, parse_special), handed to `emit` in order, a piece of
// text (at most `piece_bytes`, cut at a checked place) at a time; `emit` returns false to stop.
// Memory: one piece's tokenizing, whatever the text's length. Throws FormatError naming `name`
// where no checked cut lies within a piece (a line of more than `piece_bytes` without spaces).
void encode_in_pieces(const Tokenizer& tok, std::string_view text, bool add_bos, bool parse_special,
                      const std::function<bool(const std::vector<int>&)>& emit, const std::string& name,
                      size_t piece_bytes = kEncodePieceBytes);

// All the ids at once, for a text known to be short enough to hold them.
std::vector<int> encode_in_pieces(const Tokenizer& tok, std::string_view text, bool add_bos, bool parse_special,
                                  const std::string& name, size_t piece_bytes = kEncodePieceBytes);

}  // namespace medusa
