// Every test string of llama.cpp's vocabulary oracles (shared/testdata/ggml/tokenizer) tokenized
// by the engine, without BOS/EOS and without parsing special-token text, against the ids llama.cpp
// wrote: byte-level BPE (GPT-2, Llama 3, DeepSeek, Falcon, MPT, StarCoder, Refact) and
// sentencepiece (Llama, Phi-3).
#include <catch2/catch.hpp>

#include "model/gguf_vocab.h"
#include "model/tokenizer.h"
#include "test_paths.h"
#include "vocab_test_files.h"
#include "xz_file.h"

using namespace medusa;

namespace {

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
        const auto strings = test::vocab_test_strings(base + ".inp");
        const auto want = test::vocab_test_ids(base + ".out");
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
