// A long text tokenized in pieces gives the ids of the whole text tokenized at once, with every
// kind of vocabulary the program reads: sentencepiece models (with and without normalization
// rules) and byte-level BPE with each pre-tokenizer.
#include <catch2/catch.hpp>

#include <random>

#include "model/encode_in_pieces.h"
#include "model/gguf_vocab.h"
#include "model/model_file.h"
#include "model/tokenizer.h"
#include "test_paths.h"
#include "xz_file.h"

using namespace medusa;

namespace {

// Prose of a few paragraphs: words, punctuation, numbers, indented and blank lines, runs of
// spaces, accents, CJK and an emoji, as text people tokenize has them.
std::string prose(size_t bytes) {
    const char* words[] = {"Once", "upon", "a", "time", "there", "was", "little", "girl", "named", "Lily.", "She",
                           "liked", "to", "play", "outside,", "in", "the", "park", "with", "her", "dog", "\"Max\"",
                           "1984", "3.14", "café", "naïve", "中文", "😀", "don't", "it's", "(maybe)", "well-known", "--",
                           "x=y+1;", "e-mail:", "tom@example.com", "https://example.com/a?b=c", "UPPER", "CamelCase"};
    std::mt19937 rng(7);
    std::string out;
    while (out.size() < bytes) {
        const int words_in_line = 3 + int(rng() % 14);
        if (rng() % 5 == 0) out += "    ";  // indented
        for (int w = 0; w < words_in_line; ++w) {
            out += words[rng() % std::size(words)];
            out += rng() % 17 == 0 ? "  " : " ";
        }
        out.back() = '.';
        out += rng() % 4 == 0 ? "\n\n" : "\n";
    }
    return out;
}

Tokenizer ggml_vocab(const std::string& name) {
    const std::string path = test::ggml_path("tokenizer/ggml-vocab-" + name + ".gguf.xz");
    return Tokenizer::from_serialized(load_gguf_vocab(*test::read_xz(path), path), name);
}

}  // namespace

TEST_CASE("a text tokenized in pieces gives the whole text's ids with every kind of vocabulary", "[tokenizer]") {
    std::vector<std::pair<std::string, Tokenizer>> tokenizers;
    for (const char* model : {"tok512.model", "llama2-tokenizer.model"})
        tokenizers.emplace_back(model, Tokenizer::from_file(test::model_path(model)));
    for (const char* model : {"nmt_nfkc.model", "rules.model"})
        tokenizers.emplace_back(model, Tokenizer::from_file(std::string(MEDUSA_SOURCE_DIR) + "/tests/data/sentencepiece/" + model));
    for (const char* vocab : {"llama-spm", "phi-3", "gpt-2", "llama-bpe", "qwen2", "deepseek-llm", "falcon", "mpt",
                              "starcoder", "refact"})
        tokenizers.emplace_back(vocab, ggml_vocab(vocab));
    const std::string text = prose(48 << 10);
    for (const auto& [name, tok] : tokenizers) {
        CAPTURE(name);
        const bool bos = tok.bos_id() >= 0;
        const std::vector<int> whole = tok.encode(text, bos);
        CHECK(encode_in_pieces(tok, text, bos, false, name, 4096) == whole);
        CHECK(encode_in_pieces(tok, text, bos, false, name) == whole);  // one piece
        // The pieces are bounded: ~12 of them, none more than 4 KiB of text (and the words before it).
        size_t pieces = 0, longest = 0;
        encode_in_pieces(
            tok, text, bos, false,
            [&](const std::vector<int>& ids) {
                ++pieces;
                longest = std::max(longest, ids.size());
                return true;
            },
            name, 4096);
        CHECK(pieces >= text.size() / 4096);
        CHECK(longest < whole.size() / 6);
    }
}

TEST_CASE("tokenizing in pieces stops when asked, and refuses a text it cannot cut", "[tokenizer]") {
    const Tokenizer tok = Tokenizer::from_file(test::model_path("tok512.model"));
    const std::string text = prose(32 << 10);
    int pieces = 0;
    encode_in_pieces(
        tok, text, true, false, [&](const std::vector<int>&) { return ++pieces < 2; }, "prose", 4096);
    CHECK(pieces == 2);
    const std::string unbroken = "Once " + std::string(10000, 'a') + " upon";
    CHECK_THROWS_WITH(encode_in_pieces(tok, unbroken, true, false, "word.txt", 4096),
                      Catch::Contains("word.txt") && Catch::Contains("no place to cut") &&
                          Catch::Contains("line breaks or spaces"));
    CHECK(encode_in_pieces(tok, unbroken, true, false, "word.txt") == tok.encode(unbroken, true));  // one piece
}
