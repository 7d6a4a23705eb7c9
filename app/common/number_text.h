// Numbers typed on a command line: the whole text must be one finite number. std::stof refuses
// what underflows (1e-45 is a valid, tiny float) and accepts trailing junk only when asked; this
// takes what strtod reads, underflow included, and nothing else.
#pragma once
#include <optional>
#include <string_view>

namespace medusa {

// The number `text` spells (as a float: its magnitude at most FLT_MAX), or nothing for an empty,
// partial, infinite or NaN text or one too large for a float.
std::optional<float> parse_finite_float(std::string_view text);

}  // namespace medusa
