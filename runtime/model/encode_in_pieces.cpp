#include "model/encode_in_pieces.h"

#include <algorithm>

#include "model/format_error.h"

namespace medusa {

namespace {

constexpr size_t kCheckedBytes = 512;  // the words before a cut that are checked, at most
constexpr size_t kLookaheadBytes = 512;  // the text after a cut they are checked before
constexpr int kCutsChecked = 64;  // places tried per piece (each check tokenizes about 1 KiB)
constexpr int kPiecesTried = 4;   // pieces tokenized per piece kept, at most

bool starts_with(const std::vector<int>& ids, const std::vector<int>& head) {
    return ids.size() >= head.size() && std::equal(head.begin(), head.end(), ids.begin());
}

bool ends_with(const std::vector<int>& ids, const std::vector<int>& tail) {
    return ids.size() >= tail.size() && std::equal(tail.begin(), tail.end(), ids.end() - std::ptrdiff_t(tail.size()));
}

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

// A cut may go after a line break or before the first of some spaces.
bool may_cut_at(std::string_view text, size_t i) {
    return text[i - 1] == '\n' || (text[i] == ' ' && text[i - 1] != ' ');
}

// Where the checked words before a cut at `cut` may begin, after `floor`: at one of the last
// spaces before it (byte-level BPE keeps a space with the word after it) or just after it
// (sentencepiece marks a word's start with "▁", as it does a text's).
std::vector<size_t> checked_starts(std::string_view text, size_t floor, size_t cut) {
    std::vector<size_t> out;
    const size_t lowest = std::max(floor, cut > kCheckedBytes ? cut - kCheckedBytes : 0);
    int spaces = 0;
    for (size_t i = cut - 1; i > lowest && spaces < 3; --i) {
        if (!is_space(text[i - 1])) continue;
        ++spaces;
        out.push_back(i - 1);
        out.push_back(i);
    }
    return out;
}

}  // namespace

void encode_in_pieces(const Tokenizer& tok, std::string_view text, bool add_bos, bool parse_special,
                      const std::function<bool(const std::vector<int>&)>& emit, const std::string& name,
                      size_t piece_bytes) {
    const size_t n = text.size();
    piece_bytes = std::max<size_t>(piece_bytes, 4 * (kCheckedBytes + kLookaheadBytes));
    auto encode = [&](size_t from, size_t to, bool bos) {
        return tok.encode(std::string(text.substr(from, to - from)), bos, parse_special);
    };
    // The piece tokenized next starts at `start`, with the words before the last cut (`head`,
    // tokenized on their own) whose tokens were held back from the piece before.
    size_t start = 0, cut = 0;
    std::vector<int> head;
    auto check_head = [&](const std::vector<int>& ids) {
        if (!starts_with(ids, head))
            throw FormatError(name + ": the text tokenizes differently in pieces than whole near byte " +
                              std::to_string(cut) + "; it cannot be tokenized in bounded memory");
    };
    while (n - cut > piece_bytes) {
        const bool bos = add_bos && cut == 0;
        int checks = 0, tries = 0;
        bool kept = false;
        for (size_t e = cut + piece_bytes; e > cut + piece_bytes / 4 && !kept; --e) {
            if (!may_cut_at(text, e)) continue;
            if (++checks > kCutsChecked) break;
            // The words before the cut, and their tokens where those are the same before what follows.
            std::vector<std::pair<size_t, std::vector<int>>> tails;
            for (size_t c : checked_starts(text, cut, e)) {
                std::vector<int> tail = encode(c, e, false);
                if (!tail.empty() && starts_with(encode(c, std::min(n, e + kLookaheadBytes), false), tail))
                    tails.push_back({c, std::move(tail)});
            }
            if (tails.empty()) continue;
            if (++tries > kPiecesTried) break;
            std::vector<int> ids = encode(start, e, bos);
            check_head(ids);
            for (auto& [c, tail] : tails) {
                if (!ends_with(ids, tail)) continue;  // and the same at the piece's end
                ids.resize(ids.size() - tail.size());
                if (!emit(ids)) return;
                start = c, cut = e, head = std::move(tail), kept = true;
                break;
            }
        }
        if (!kept)
            throw FormatError(name + ": found no place to cut the text between bytes " + std::to_string(cut) +
                              " and " + std::to_string(cut + piece_bytes) +
                              " where its tokens stay the same; a text longer than " + std::to_string(piece_bytes) +
                              " bytes is tokenized in pieces, cut at line breaks or spaces");
    }
    std::vector<int> ids = encode(start, n, add_bos && cut == 0);
    check_head(ids);
    emit(ids);
}

std::vector<int> encode_in_pieces(const Tokenizer& tok, std::string_view text, bool add_bos, bool parse_special,
                                  const std::string& name, size_t piece_bytes) {
    std::vector<int> out;
    encode_in_pieces(
        tok, text, add_bos, parse_special,
        [&](const std::vector<int>& ids) {
            out.insert(out.end(), ids.begin(), ids.end());
            return true;
        },
        name, piece_bytes);
    return out;
}

}  // namespace medusa
