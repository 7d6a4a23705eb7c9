// Locations of the shared model files and test vectors, for tests.
#pragma once
#include <cstdlib>
#include <string>

namespace medusa::test {
inline std::string shared_dir() {
    if (const char* env = std::getenv("MEDUSA_SHARED_DIR")) return env;
    return MEDUSA_SHARED_DIR;
}
inline std::string model_path(const std::string& name) { return shared_dir() + "/models/" + name; }
inline std::string testdata_path(const std::string& name) { return shared_dir() + "/testdata/" + name; }
// llama.cpp's oracles (see shared/testdata/ggml/README.md): quant/, arch/, tokenizer/.
inline std::string ggml_path(const std::string& name) { return testdata_path("ggml/" + name); }
}  // namespace medusa::test
