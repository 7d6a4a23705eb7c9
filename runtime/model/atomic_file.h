// Writes a whole file so that it appears complete or not at all: a temporary file in the same
// folder, written, flushed to disk, then renamed over the path. An existing file survives any
// failure untouched.
#pragma once
#include <string>
#include <string_view>

namespace medusa {

// Throws std::runtime_error "PATH: cannot write: REASON" (strerror) on any failure.
void write_file_atomically(const std::string& path, std::string_view bytes);

}  // namespace medusa
