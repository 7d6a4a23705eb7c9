// How a chat message's markdown is shown: which of its bytes appear (markup such as ** or ``` is
// hidden), in which style, what the layout adds (list bullets and numbers, line breaks between
// blocks), and which heading level or table cell each piece belongs to (laid out larger, or in a
// grid, by the transcript). Parsed by md4c (CommonMark with tables and strikethrough). A reply is
// made of tokens, each drawn in the colour of whoever guessed it: styled_runs maps the shown bytes
// back to their tokens so that a styled word keeps its tokens' colours and tooltips.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace medusa::chat {

// A set of MarkdownStyle flags.
enum MarkdownStyle : uint8_t {
    kMdPlain = 0,
    kMdStrong = 1,
    kMdEmphasis = 2,
    kMdCode = 4,       // `inline code`
    kMdCodeBlock = 8,  // fenced or indented code
    kMdHeading = 16,
    kMdLink = 32,
    kMdQuote = 64,
    kMdStrike = 128,
};

// Where a piece stands in the blocks that lay out apart from the text: a heading's level, and a
// table's cell (the table's number in the text, its row, 0 the header, and its column).
struct MarkdownPlace {
    uint8_t heading = 0;  // 1 to 6 in a heading, else 0
    int table = -1, row = -1, col = -1;
    bool in_table() const { return table >= 0; }
    bool operator==(const MarkdownPlace&) const = default;
};

struct MarkdownPiece {
    size_t begin = 0, end = 0;  // the source's bytes [begin, end) shown (empty for added text)
    std::string added;          // text the layout adds instead: "\n", a bullet, a list number
    uint8_t style = kMdPlain;
    MarkdownPlace place;
    bool from_source() const { return added.empty(); }
};

// The pieces of `text` in the order they are shown.
std::vector<MarkdownPiece> markdown_pieces(std::string_view text);

// A run of shown text in one style from one token (token -1: text the layout added).
struct StyledRun {
    std::string text;
    uint8_t style = kMdPlain;
    int token = -1;
    MarkdownPlace place;
};

// `tokens`' texts, concatenated, shown as markdown: runs in display order, each within one token.
std::vector<StyledRun> styled_runs(const std::vector<std::string>& tokens);

}  // namespace medusa::chat
