// Text from files (a tensor name, a pickle's global, a tokenizer's regex) reaches error messages,
// and a terminal obeys the escape sequences in what it prints: ESC [2J clears the screen, others
// set the title or remap keys. Messages are made safe to print, and stay on one line.
#pragma once
#include <string>
#include <string_view>

namespace medusa {

// `text` with every control character (C0, DEL, and the C1 range as UTF-8) and every byte that is
// not part of well-formed UTF-8 written as \xNN; printable UTF-8 passes unchanged.
std::string terminal_safe(std::string_view text);

}  // namespace medusa
