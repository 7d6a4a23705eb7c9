#include "terminal_text.h"

#include <cstdint>
#include <cstdio>

namespace medusa {

namespace {

// The length of the well-formed UTF-8 sequence at `s[i]`, or 0.
size_t utf8_length(std::string_view s, size_t i) {
    const uint8_t c = uint8_t(s[i]);
    const size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return 0;
    uint32_t cp = len == 1 ? c : len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
    for (size_t k = 1; k < len; ++k) {
        if ((uint8_t(s[i + k]) & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (uint8_t(s[i + k]) & 0x3F);
    }
    static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) return 0;  // C0, DEL, C1: escaped byte by byte
    return len;
}

}  // namespace

std::string terminal_safe(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        const size_t len = utf8_length(text, i);
        if (len > 0) {
            out.append(text.substr(i, len));
            i += len;
        } else {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02X", unsigned(uint8_t(text[i])));
            out += hex;
            ++i;
        }
    }
    return out;
}

}  // namespace medusa
