// Every test string of llama.cpp's vocabulary oracles (shared/testdata/ggml/tokenizer) tokenized
// by the engine, without BOS/EOS and without parsing special-token text, against the ids llama.cpp
// wrote: byte-level BPE (GPT-2, Llama 3, DeepSeek, Falcon, MPT, StarCoder, Refact) and
// sentencepiece (Llama, Phi-3).
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "model/gguf_vocab.h"
#include "model/tokenizer.h"
#include "test_paths.h"
#include "xz_file.h"

using namespace medusa;

namespace {

std::string slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    REQUIRE(f.good());
    return std::string((std::istreambuf_iterator<char>(f)), {});
}

// The .inp strings: joined by the separator, which also ends the file.
std::vector<std::string> test_strings(const std::string& path) {
    const std::string text = slurp(path), sep = "\n__ggml_vocab_test__\n";
    std::vector<std::string> out;
    size_t at = 0;
    for (size_t next; (next = text.find(sep, at)) != std::string::npos; at = next + sep.size())
        out.push_back(text.substr(at, next - at));
    REQUIRE(at == text.size());
    return out;
}

// The .out lines: ids each preceded by a space; an empty line is no tokens.
std::vector<std::vector<int>> expected_ids(const std::string& path) {
    std::vector<std::vector<int>> out;
    std::istringstream lines(slurp(path));
    for (std::string line; std::getline(lines, line);) {
        std::istringstream ids(line);
        out.emplace_back();
        for (int id; ids >> id;) out.back().push_back(id);
    }
    return out;
}

Tokenizer vocab_tokenizer(const std::string& name) {
    const std::string path = test::ggml_path("tokenizer/ggml-vocab-" + name + ".gguf.xz");
    return Tokenizer::from_serialized(load_gguf_vocab(*test::read_xz(path), path), path);
}

}  // namespace

TEST_CASE("every test string tokenizes to llama.cpp's ids", "[tokenizer-oracles]") {
    for (const char* name : {"gpt-2", "llama-bpe", "deepseek-llm", "falcon", "mpt", "starcoder", "refact",
                             "llama-spm", "phi-3"}) {
        CAPTURE(name);
        const Tokenizer tok = vocab_tokenizer(name);
        const std::string base = test::ggml_path(std::string("tokenizer/ggml-vocab-") + name + ".gguf");
        const auto strings = test_strings(base + ".inp");
        const auto want = expected_ids(base + ".out");
        REQUIRE(strings.size() == 46);
        REQUIRE(want.size() == strings.size());
        int wrong = 0;
        for (size_t i = 0; i < strings.size(); ++i) {
            CAPTURE(i, strings[i]);
            const std::vector<int> got = tok.encode(strings[i], false, false);
            CHECK(got == want[i]);
            wrong += got != want[i];
        }
        CHECK(wrong == 0);
    }
}
