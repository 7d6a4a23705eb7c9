// A whole file as bytes in a string, and back: what the tests that craft or check files share.
#pragma once
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace medusa::test {

inline std::string read_text(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void write_text(const std::filesystem::path& p, const std::string& s) {
    std::ofstream(p, std::ios::binary) << s;
}

}  // namespace medusa::test
