#include "markdown_text.h"

#include <md4c.h>

#include <algorithm>

namespace medusa::chat {

namespace {

// Nested lists indent two spaces a level down to this depth; deeper items line up with it. Every
// item's mark is then at most 2·kMaxListIndent + 12 bytes: an indent per level of depth would make
// a text of nested lists ("- - - - ...") show bytes in the square of its length.
constexpr size_t kMaxListIndent = 8;

// Markdown as people write it makes a few callbacks per byte: a nested list item four per two
// bytes, a table row three per cell.
constexpr size_t kCallsPerByte = 32;

// md4c's callbacks build the pieces: spans set style flags, blocks ask for line breaks before
// whatever is shown next, list items add their bullet or number.
struct Builder {
    std::string_view src;
    // Callbacks md4c may still make (kCallsPerByte per byte of text): it pads every table row to
    // the header's width, so a wide header over many short rows calls back in the square of the
    // text's length. A text that runs out is shown as written.
    size_t calls_left = 0;
    bool spend() { return calls_left > 0 ? (--calls_left, true) : false; }
    std::vector<MarkdownPiece> pieces;
    int strong = 0, emphasis = 0, code = 0, link = 0, strike = 0, quote = 0;
    bool code_block = false, heading = false;
    int breaks = 0;  // line breaks owed before the next shown text
    struct List {
        bool ordered;
        unsigned next;
    };
    std::vector<List> lists;
    MarkdownPlace place;  // the heading or table cell being shown
    int tables = 0;       // tables so far

    uint8_t style() const {
        uint8_t s = kMdPlain;
        if (strong || heading) s |= kMdStrong;
        if (emphasis) s |= kMdEmphasis;
        if (code) s |= kMdCode;
        if (code_block) s |= kMdCodeBlock;
        if (heading) s |= kMdHeading;
        if (link) s |= kMdLink;
        if (quote) s |= kMdQuote;
        if (strike) s |= kMdStrike;
        return s;
    }
    void owe(int n) { breaks = std::max(breaks, n); }
    void flush_breaks() {
        if (!pieces.empty())
            for (int i = 0; i < breaks; ++i) pieces.push_back({0, 0, "\n", kMdPlain, place});
        breaks = 0;
    }
    void add(std::string text, uint8_t s) {
        flush_breaks();
        pieces.push_back({0, 0, std::move(text), s, place});
    }
    void show(const char* text, size_t size) {
        flush_breaks();
        const uint8_t s = style();
        // Most text points into the source; entities and some newlines may not.
        if (text >= src.data() && text + size <= src.data() + src.size()) {
            const size_t b = size_t(text - src.data());
            if (!pieces.empty() && pieces.back().from_source() && pieces.back().style == s && pieces.back().end == b &&
                pieces.back().place == place)
                pieces.back().end = b + size;
            else
                pieces.push_back({b, b + size, "", s, place});
        } else {
            add(std::string(text, size), s);
        }
    }
};

int enter_block(MD_BLOCKTYPE type, void* detail, void* user) {
    Builder& b = *static_cast<Builder*>(user);
    if (!b.spend()) return 1;
    switch (type) {
        case MD_BLOCK_UL: b.owe(b.lists.empty() ? 2 : 1), b.lists.push_back({false, 0}); break;
        case MD_BLOCK_OL:
            b.owe(b.lists.empty() ? 2 : 1);
            b.lists.push_back({true, static_cast<MD_BLOCK_OL_DETAIL*>(detail)->start});
            break;
        case MD_BLOCK_LI: {
            b.owe(1);
            std::string mark(2 * std::min(b.lists.size() - 1, kMaxListIndent), ' ');
            if (!b.lists.empty() && b.lists.back().ordered) mark += std::to_string(b.lists.back().next++) + ". ";
            else mark += "\xE2\x80\xA2 ";  // a bullet
            b.add(mark, kMdPlain);
            break;
        }
        case MD_BLOCK_H:
            b.owe(2), b.heading = true;
            b.place.heading = uint8_t(static_cast<MD_BLOCK_H_DETAIL*>(detail)->level);
            break;
        case MD_BLOCK_CODE: b.owe(2), b.code_block = true; break;
        case MD_BLOCK_QUOTE: b.owe(2), ++b.quote; break;
        case MD_BLOCK_HR: b.owe(2), b.add("\xE2\x94\x80\xE2\x94\x80\xE2\x94\x80\xE2\x94\x80\xE2\x94\x80\xE2\x94\x80", kMdQuote); break;
        case MD_BLOCK_P: b.owe(b.lists.empty() ? 2 : 1); break;
        case MD_BLOCK_TABLE: b.owe(2), b.place.table = b.tables++, b.place.row = -1; break;
        case MD_BLOCK_TR: b.owe(1), ++b.place.row, b.place.col = -1; break;
        case MD_BLOCK_TH:
        case MD_BLOCK_TD:
            ++b.place.col;
            if (type == MD_BLOCK_TH) ++b.strong;
            break;
        default: break;
    }
    return 0;
}

int leave_block(MD_BLOCKTYPE type, void*, void* user) {
    Builder& b = *static_cast<Builder*>(user);
    if (!b.spend()) return 1;
    switch (type) {
        case MD_BLOCK_UL:
        case MD_BLOCK_OL:
            b.lists.pop_back();
            b.owe(b.lists.empty() ? 2 : 1);
            break;
        case MD_BLOCK_H: b.heading = false, b.place.heading = 0, b.owe(2); break;
        case MD_BLOCK_CODE:
            // The block's last newline would leave an empty line below it.
            if (!b.pieces.empty()) {
                MarkdownPiece& last = b.pieces.back();
                if (last.from_source() && last.end > last.begin && b.src[last.end - 1] == '\n') --last.end;
                if (last.added == "\n" || (last.from_source() && last.end == last.begin)) b.pieces.pop_back();
            }
            b.code_block = false, b.owe(2);
            break;
        case MD_BLOCK_QUOTE: --b.quote, b.owe(2); break;
        case MD_BLOCK_TABLE: b.place.table = b.place.row = b.place.col = -1, b.owe(2); break;
        case MD_BLOCK_TH: --b.strong; break;
        case MD_BLOCK_P: b.owe(b.lists.empty() ? 2 : 1); break;
        default: break;
    }
    return 0;
}

// How deep the builder is in spans of this type (nullptr: a span type shown plain).
int* span_depth(Builder& b, MD_SPANTYPE type) {
    switch (type) {
        case MD_SPAN_STRONG: return &b.strong;
        case MD_SPAN_EM: return &b.emphasis;
        case MD_SPAN_CODE: return &b.code;
        case MD_SPAN_A: return &b.link;
        case MD_SPAN_DEL: return &b.strike;
        default: return nullptr;
    }
}

int enter_span(MD_SPANTYPE type, void*, void* user) {
    Builder& b = *static_cast<Builder*>(user);
    if (!b.spend()) return 1;
    if (int* depth = span_depth(b, type)) ++*depth;
    return 0;
}

int leave_span(MD_SPANTYPE type, void*, void* user) {
    Builder& b = *static_cast<Builder*>(user);
    if (!b.spend()) return 1;
    if (int* depth = span_depth(b, type)) --*depth;
    return 0;
}

int text(MD_TEXTTYPE type, const MD_CHAR* t, MD_SIZE size, void* user) {
    Builder& b = *static_cast<Builder*>(user);
    if (!b.spend()) return 1;
    switch (type) {
        case MD_TEXT_NULLCHAR: b.add("\xEF\xBF\xBD", b.style()); break;  // U+FFFD, as CommonMark says
        // A model's single newlines are meant as lines: shown as such, not joined into one.
        case MD_TEXT_BR:
        case MD_TEXT_SOFTBR: b.add("\n", b.style()); break;
        default: b.show(t, size); break;
    }
    return 0;
}

}  // namespace

std::vector<MarkdownPiece> markdown_pieces(std::string_view source) {
    Builder b{source};
    b.calls_left = kCallsPerByte * source.size() + 4096;
    MD_PARSER parser{};
    parser.flags = MD_FLAG_TABLES | MD_FLAG_STRIKETHROUGH | MD_FLAG_PERMISSIVEAUTOLINKS | MD_FLAG_NOHTML;
    parser.enter_block = enter_block;
    parser.leave_block = leave_block;
    parser.enter_span = enter_span;
    parser.leave_span = leave_span;
    parser.text = text;
    if (md_parse(source.data(), MD_SIZE(source.size()), &parser, &b) != 0)  // over its budget of callbacks
        return {{0, source.size(), "", kMdPlain}};
    return b.pieces;
}

std::vector<StyledRun> styled_runs(const std::vector<std::string>& tokens) {
    std::string all;
    std::vector<size_t> starts;  // each token's first byte
    for (const auto& t : tokens) starts.push_back(all.size()), all += t;
    std::vector<StyledRun> runs;
    for (const MarkdownPiece& p : markdown_pieces(all)) {
        if (!p.from_source()) {
            runs.push_back({p.added, p.style, -1, p.place});
            continue;
        }
        // The tokens overlapping [begin, end): the last token starting at or before begin, on.
        size_t i = size_t(std::upper_bound(starts.begin(), starts.end(), p.begin) - starts.begin());
        i = i > 0 ? i - 1 : 0;
        for (; i < tokens.size() && starts[i] < p.end; ++i) {
            const size_t b = std::max(p.begin, starts[i]), e = std::min(p.end, starts[i] + tokens[i].size());
            if (e > b) runs.push_back({all.substr(b, e - b), p.style, int(i), p.place});
        }
    }
    return runs;
}

}  // namespace medusa::chat
