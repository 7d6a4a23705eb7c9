// The error every reader of a file raises for malformed, truncated or unsupported input.
#pragma once
#include <stdexcept>

namespace medusa {

// Raised for any malformed, truncated or unsupported input file; the message names the file.
struct FormatError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

}  // namespace medusa
