// llama.cpp's tokenizer test files (tests/test-tokenizer-0's format): a .inp file of strings,
// each followed by "\n__ggml_vocab_test__\n", and a .out file of their ids, one line a string.
#pragma once
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace medusa::test {

inline std::string slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    REQUIRE(f.good());
    return std::string((std::istreambuf_iterator<char>(f)), {});
}

// The .inp strings: joined by the separator, which also ends the file.
inline std::vector<std::string> vocab_test_strings(const std::string& path) {
    const std::string text = slurp(path), sep = "\n__ggml_vocab_test__\n";
    std::vector<std::string> out;
    size_t at = 0;
    for (size_t next; (next = text.find(sep, at)) != std::string::npos; at = next + sep.size())
        out.push_back(text.substr(at, next - at));
    REQUIRE(at == text.size());
    return out;
}

// The .out lines: ids each preceded by a space; an empty line is no tokens.
inline std::vector<std::vector<int>> vocab_test_ids(const std::string& path) {
    std::vector<std::vector<int>> out;
    std::istringstream lines(slurp(path));
    for (std::string line; std::getline(lines, line);) {
        std::istringstream ids(line);
        out.emplace_back();
        for (int id; ids >> id;) out.back().push_back(id);
    }
    return out;
}

}  // namespace medusa::test
