// Reading llama.cpp's oracle files (shared/testdata/ggml): JSON documents and their floats.
#pragma once
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_paths.h"

namespace medusa::test {

inline nlohmann::json read_json(const std::string& path) {
    std::ifstream f(path);
    REQUIRE(f.good());
    return nlohmann::json::parse(f);
}

// A JSON array of numbers as floats (each printed as the shortest decimal of an f32).
inline std::vector<float> json_floats(const nlohmann::json& a) {
    std::vector<float> v;
    for (const auto& x : a) v.push_back(float(x.get<double>()));
    return v;
}

// The oracle files of one kind ("tensors.json", "logits.json") under the folders, sorted.
inline std::vector<std::string> ggml_oracles(const std::string& suffix, std::vector<std::string> dirs) {
    std::vector<std::string> out;
    for (const std::string& dir : dirs)
        for (const auto& e : std::filesystem::directory_iterator(ggml_path(dir))) {
            const std::string p = e.path().string();
            if (p.size() > suffix.size() && p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0)
                out.push_back(p);
        }
    std::sort(out.begin(), out.end());
    return out;
}

// "quant/oracle-a-q4_0.tensors.json" -> "quant/oracle-a-q4_0.gguf"
inline std::string gguf_beside(const std::string& oracle) {
    const size_t dot = oracle.rfind('.', oracle.rfind('.') - 1);
    return oracle.substr(0, dot) + ".gguf";
}

}  // namespace medusa::test
