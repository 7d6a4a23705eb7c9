// Markdown in chat messages: markup hidden, styles where CommonMark puts them, the layout's own
// bullets and breaks, and every shown byte traced back to the token it came from.
#include <catch2/catch.hpp>

#include <string>

#include "markdown_text.h"

using namespace medusa::chat;

namespace {

// What is shown, with the style in brackets where it changes to one that is not plain: "[S]bold".
std::string shown(const std::string& text) {
    std::string out;
    uint8_t prev = kMdPlain;
    for (const MarkdownPiece& p : markdown_pieces(text)) {
        const std::string t = p.from_source() ? text.substr(p.begin, p.end - p.begin) : p.added;
        const bool changed = p.style != prev;
        prev = p.style;
        if (changed && p.style != kMdPlain) {
            out += "[";
            if (p.style & kMdStrong) out += "S";
            if (p.style & kMdEmphasis) out += "E";
            if (p.style & kMdCode) out += "C";
            if (p.style & kMdCodeBlock) out += "B";
            if (p.style & kMdHeading) out += "H";
            if (p.style & kMdLink) out += "L";
            if (p.style & kMdQuote) out += "Q";
            if (p.style & kMdStrike) out += "X";
            out += "]";
        }
        out += t;
    }
    return out;
}

size_t shown_bytes(const std::string& text) {
    size_t n = 0;
    for (const MarkdownPiece& p : markdown_pieces(text)) n += p.from_source() ? p.end - p.begin : p.added.size();
    return n;
}

}  // namespace

TEST_CASE("markdown: emphasis, code and links lose their markup and keep their style", "[chat][markdown]") {
    CHECK(shown("plain words") == "plain words");
    CHECK(shown("a **bold** and *slanted* word") == "a [S]bold and [E]slanted word");
    CHECK(shown("call `f(x)` now") == "call [C]f(x) now");
    CHECK(shown("~~gone~~ [site](http://x.org)") == "[X]gone [L]site");
    CHECK(shown("a * b * c") == "a * b * c");  // not emphasis: CommonMark's rules, not a guess
    CHECK(shown("2 < 3 & 4 > 1") == "2 < 3 & 4 > 1");
}

TEST_CASE("markdown: headings, lists, code blocks, quotes and tables lay out as blocks", "[chat][markdown]") {
    CHECK(shown("# Title\nText") == "[SH]Title\n\nText");
    CHECK(shown("- one\n- two") == "\xE2\x80\xA2 one\n\xE2\x80\xA2 two");
    CHECK(shown("3. c\n4. d") == "3. c\n4. d");
    CHECK(shown("- a\n  - b\n- c") == "\xE2\x80\xA2 a\n  \xE2\x80\xA2 b\n\xE2\x80\xA2 c");
    CHECK(shown("Intro:\n\n```cpp\nint x = 1;\nx++;\n```\nAfter") == "Intro:\n\n[B]int x = 1;\nx++;\n\nAfter");
    CHECK(shown("> quoted") == "[Q]quoted");
    CHECK(shown("| a | b |\n|---|---|\n| 1 | 2 |") == "[S]ab\n12");  // cells laid out as a grid (below)
    CHECK(shown("line one\nline two") == "line one\nline two");  // a model's newlines stay lines
}

TEST_CASE("markdown: a reply's tokens keep their shown bytes, split where the style changes", "[chat][markdown]") {
    // "**" arrives as its own token, "bo" + "ld" split the bold word, "`x`" is one token.
    const std::vector<std::string> tokens = {"Say", " **", "bo", "ld", "** and", " `x`", "."};
    const std::vector<StyledRun> runs = styled_runs(tokens);
    std::string text;
    for (const StyledRun& r : runs) text += r.text;
    CHECK(text == "Say bold and x.");
    REQUIRE(runs.size() == 8);
    CHECK((runs[0].text == "Say" && runs[0].token == 0 && runs[0].style == kMdPlain));
    CHECK((runs[1].text == " " && runs[1].token == 1));  // the markup of token 1 is hidden, its space shown
    CHECK((runs[2].text == "bo" && runs[2].token == 2 && runs[2].style == kMdStrong));
    CHECK((runs[3].text == "ld" && runs[3].token == 3 && runs[3].style == kMdStrong));
    CHECK((runs[4].text == " and" && runs[4].token == 4 && runs[4].style == kMdPlain));
    CHECK((runs[5].text == " " && runs[5].token == 5 && runs[5].style == kMdPlain));
    CHECK((runs[6].text == "x" && runs[6].token == 5 && runs[6].style == kMdCode));
    CHECK((runs[7].text == "." && runs[7].token == 6 && runs[7].style == kMdPlain));
}

TEST_CASE("markdown: an unfinished reply (mid-stream) and hostile text still lay out", "[chat][markdown]") {
    CHECK(shown("```py\nprint(1)") == "[B]print(1)");  // a code fence still open
    CHECK(shown("**half") == "**half");
    std::string deep(5000, '>');
    CHECK_NOTHROW(markdown_pieces(deep + " x"));
    std::string nested;
    for (int i = 0; i < 2000; ++i) nested += std::string(size_t(2 * i), ' ') + "- a\n";
    CHECK_NOTHROW(markdown_pieces(nested));
    CHECK(shown(std::string("a\0b", 3)) == "a\xEF\xBF\xBD" "b");
}

TEST_CASE("markdown: nested lists and wide tables show bytes linear in their text", "[chat][markdown]") {
    // A list item costs at least two source bytes ("- ") and shows at most its mark (16 spaces of
    // indent and a bullet or a number) and a line break: 16 shown bytes per source byte bound it.
    const size_t per_byte = 16;
    // Small enough that a layout indenting every level (quadratic) still finishes: 4 KB of
    // "- - - ..." showed 4 MB.
    std::string nested;
    while (nested.size() < 4000) nested += "- ";
    nested += "x";
    REQUIRE(shown_bytes(nested) <= per_byte * nested.size());
    // md4c pads every row to the header's width: 500 columns over short rows showed 300 times the
    // text, in as many callbacks. Past its budget of callbacks a text is shown as written.
    std::string table = "|";
    for (int i = 0; i < 500; ++i) table += "a|";
    table += "\n|";
    for (int i = 0; i < 500; ++i) table += "---|";
    table += "\n";
    for (int i = 0; i < 1000; ++i) table += "|b\n";
    REQUIRE(shown_bytes(table) <= per_byte * table.size());
    CHECK(shown(table) == table);
    // A short row's empty cells show nothing.
    CHECK(shown("| a | b | c |\n|---|---|---|\n| 1 |\n| | 2 |") == "[S]abc\n1\n2");
    // Deep levels line up with the eighth.
    std::string expected;
    for (size_t level = 0; level < 12; ++level)
        expected += (level ? "\n" : "") + std::string(2 * std::min<size_t>(level, 8), ' ') + "\xE2\x80\xA2 ";
    CHECK(shown("- - - - - - - - - - - - x") == expected + "x");
    // The size of reply that ended the app (200 KB), and a mix of both.
    std::string big;
    while (big.size() < 200000) big += big.size() % 3000 < 2000 ? "- " : "1. a\n";
    CHECK(shown_bytes(big) <= per_byte * big.size());
    CHECK(shown_bytes(table + nested + big) <= per_byte * (table.size() + nested.size() + big.size()));
}

TEST_CASE("markdown: a heading's level and a table cell's row and column go with their text", "[chat][markdown]") {
    auto place_of = [](const std::string& text, const std::string& what) {
        for (const MarkdownPiece& p : markdown_pieces(text))
            if (p.from_source() && text.substr(p.begin, p.end - p.begin) == what) return p.place;
        FAIL("no piece shows " << what);
        return MarkdownPlace{};
    };
    const std::string headings = "# One\n\n### Three\n\nplain";
    CHECK(place_of(headings, "One").heading == 1);
    CHECK(place_of(headings, "Three").heading == 3);
    CHECK(place_of(headings, "plain").heading == 0);
    const std::string tables = "| h | i |\n|---|---|\n| 1 | | \n| | 4 |\n\ntext\n\n| x |\n|---|\n| y |";
    CHECK(place_of(tables, "h") == MarkdownPlace{0, 0, 0, 0});
    CHECK(place_of(tables, "i") == MarkdownPlace{0, 0, 0, 1});
    CHECK(place_of(tables, "1") == MarkdownPlace{0, 0, 1, 0});
    CHECK(place_of(tables, "4") == MarkdownPlace{0, 0, 2, 1});  // the empty cell before it keeps its column
    CHECK_FALSE(place_of(tables, "text").in_table());
    CHECK(place_of(tables, "y") == MarkdownPlace{0, 1, 1, 0});  // the second table
    // Reply tokens keep their cell.
    for (const StyledRun& r : styled_runs({"| a | b |\n|---|---|\n| c", " | d |"}))
        if (r.text == "d") CHECK(r.place == MarkdownPlace{0, 0, 1, 1});
}
