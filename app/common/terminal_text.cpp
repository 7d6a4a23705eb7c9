#include "terminal_text.h"

#include <cstdint>
#include <cstdio>

#include "model/utf8.h"

namespace medusa {

std::string terminal_safe(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        uint32_t cp = 0;
        const size_t len = utf8_sequence(text, i, cp);
        // C0, DEL and C1 are escaped byte by byte, as bytes that are not UTF-8 are.
        if (len > 0 && cp >= 0x20 && !(cp >= 0x7F && cp <= 0x9F)) {
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
