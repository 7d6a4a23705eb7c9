// Well-formed UTF-8, as the tokenizers (which replace what is not) and the terminal messages
// (which escape it) read it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace medusa {

// The length of the well-formed UTF-8 sequence starting at s[i] and its code point, or 0 for a
// byte that starts none: a stray continuation byte, a cut sequence, an overlong form, a surrogate
// or a value past U+10FFFF.
inline size_t utf8_sequence(std::string_view s, size_t i, uint32_t& cp) {
    const uint8_t c = uint8_t(s[i]);
    const size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return 0;
    cp = len == 1 ? c : len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
    for (size_t k = 1; k < len; ++k) {
        if ((uint8_t(s[i + k]) & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (uint8_t(s[i + k]) & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    return cp >= kMin[len] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF) ? len : 0;
}

}  // namespace medusa
