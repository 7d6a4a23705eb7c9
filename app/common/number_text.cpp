#include "number_text.h"

#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <string>

namespace medusa {

std::optional<float> parse_finite_float(std::string_view text) {
    const std::string s(text);  // strtod needs a terminated string
    if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return std::nullopt;
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || !std::isfinite(v) || std::fabs(v) > FLT_MAX) return std::nullopt;
    // ERANGE with a finite result is underflow: the nearest float (or zero) is what was meant.
    return float(v);
}

}  // namespace medusa
