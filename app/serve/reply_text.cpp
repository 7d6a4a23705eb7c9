#include "reply_text.h"

#include <cstdint>

namespace medusa::serve {

size_t incomplete_utf8_tail(std::string_view text) {
    for (size_t back = 1; back <= 3 && back <= text.size(); ++back) {
        const uint8_t c = uint8_t(text[text.size() - back]);
        if ((c & 0xC0) == 0x80) continue;  // a continuation byte: its lead is further back
        const size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
        return len > back ? back : 0;
    }
    return 0;
}

ReplyText::ReplyText(std::vector<std::string> stops) : filter_(std::move(stops)) {}

std::string ReplyText::whole_characters(std::string text) {
    text.insert(0, partial_);
    const size_t tail = incomplete_utf8_tail(text);
    partial_ = text.substr(text.size() - tail);
    text.resize(text.size() - tail);
    return text;
}

std::string ReplyText::feed(const std::string& piece) { return whole_characters(filter_.feed(piece)); }

std::string ReplyText::finish() {
    std::string rest = whole_characters(filter_.flush()) + partial_;  // a character never completed goes as it is
    partial_.clear();
    return rest;
}

}  // namespace medusa::serve
