// Tokenizer: sentencepiece .model files and vocabularies embedded in GGUF files.
#include <sentencepiece_processor.h>

#include <catch2/catch.hpp>

#include "model/gguf_vocab.h"
#include "model/load_model.h"
#include "model/model_file.h"
#include "model/tokenizer.h"
#include "test_paths.h"

using namespace medusa;
using medusa::test::model_path;

namespace {

std::vector<int> sentencepiece_ids(const std::string& model, const std::string& text) {
    sentencepiece::SentencePieceProcessor sp;
    REQUIRE(sp.Load(model).ok());
    std::vector<int> ids;
    REQUIRE(sp.Encode(text, &ids).ok());
    return ids;
}

}  // namespace

TEST_CASE("tok512 encodes a prompt as sentencepiece does", "[tokenizer]") {
    const std::string path = model_path("tok512.model");
    const Tokenizer tok = Tokenizer::from_file(path);
    CHECK(tok.vocab_size() == 512);
    CHECK(tok.bos_id() == 1);
    CHECK(tok.eos_id() == 2);
    CHECK(tok.source() == path);
    const std::string prompt = "Once upon a time";
    const std::vector<int> body = sentencepiece_ids(path, prompt);
    REQUIRE(!body.empty());
    std::vector<int> with_bos = {1};
    with_bos.insert(with_bos.end(), body.begin(), body.end());
    CHECK(tok.encode(prompt, false) == body);
    CHECK(tok.encode(prompt, true) == with_bos);
    CHECK(tok.decode(body) == prompt);
    // Streaming the pieces after BOS prints the prompt exactly: no leading space on the first.
    std::string streamed;
    int prev = tok.bos_id();
    for (int id : body) {
        streamed += tok.piece_text(prev, id);
        prev = id;
    }
    CHECK(streamed == prompt);
    // Within the text, a piece starting with "▁" prints a space.
    CHECK(tok.piece(body.back()).rfind("\xE2\x96\x81", 0) == 0);
    CHECK(tok.piece_text(body.front(), body.back())[0] == ' ');
    CHECK(tok.piece_text(tok.bos_id(), body.back())[0] != ' ');
}

TEST_CASE("piece_text turns byte pieces into raw bytes", "[tokenizer]") {
    const Tokenizer tok = Tokenizer::from_file(model_path("tok512.model"));
    sentencepiece::SentencePieceProcessor sp;
    REQUIRE(sp.Load(model_path("tok512.model")).ok());
    const int newline = sp.PieceToId("<0x0A>");
    const int high = sp.PieceToId("<0xE2>");
    REQUIRE(sp.IsByte(newline));
    CHECK(tok.piece_text(5, newline) == "\n");
    CHECK(tok.piece_text(tok.bos_id(), newline) == "\n");
    CHECK(tok.piece_text(5, high) == "\xE2");
    CHECK(tok.piece_text(5, tok.bos_id()).empty());  // control pieces print nothing
    CHECK(tok.piece_text(5, -1).empty());
    CHECK(tok.piece_text(5, 512).empty());
    // Bytes beyond the vocabulary fall back to byte pieces and come back whole.
    const std::string text = "caf\xC3\xA9 \xE2\x98\x83";
    const auto ids = tok.encode(text, true);
    std::string streamed;
    for (size_t i = 1; i < ids.size(); ++i) streamed += tok.piece_text(ids[i - 1], ids[i]);
    CHECK(streamed == text);
}

TEST_CASE("the vocabulary embedded in GGUF files tokenizes like tok512.model", "[tokenizer]") {
    const std::string text = "Once upon a time, there was a little girl named Lily.";
    const Tokenizer ref = Tokenizer::from_file(model_path("tok512.model"));
    const std::vector<int> want = sentencepiece_ids(model_path("tok512.model"), text);
    for (const char* file : {"gguf/stories260K-f32.gguf", "gguf/llama2xs-q4_0.gguf"}) {
        CAPTURE(file);
        const ModelFile m = load_model(model_path(file));
        REQUIRE_FALSE(m.embedded_tokenizer.empty());
        const Tokenizer tok = Tokenizer::from_serialized(m.embedded_tokenizer, m.path);
        CHECK(tok.vocab_size() == 512);
        CHECK(tok.bos_id() == 1);
        CHECK(tok.eos_id() == 2);
        CHECK(tok.encode(text, false) == want);
        CHECK(tok.encode(text, true).front() == 1);
        CHECK(tok.decode(want) == text);
        for (int id = 0; id < 512; ++id) {
            CAPTURE(id);
            CHECK(tok.piece(id) == ref.piece(id));
            CHECK(tok.piece_text(5, id) == ref.piece_text(5, id));
        }
        CHECK_NOTHROW(check_vocab_match(m, tok));
    }
}

TEST_CASE("a hand-built vocabulary becomes a working sentencepiece model", "[tokenizer]") {
    GgufVocab v;
    v.tokens = {"<unk>", "<s>", "</s>", "\xE2\x96\x81" "a", "b", "\xE2\x96\x81" "ab"};
    v.scores = {0, 0, 0, -1, -2, -0.5f};
    v.types = {2, 3, 3, 1, 1, 1};
    const Tokenizer tok = Tokenizer::from_serialized(sentencepiece_proto_from_vocab(v, "test vocab"), "test vocab");
    CHECK(tok.vocab_size() == 6);
    CHECK(tok.encode("ab", true) == std::vector<int>{1, 5});
    CHECK(tok.encode("a ab", false) == std::vector<int>{3, 5});  // the higher score wins the merge
    CHECK(tok.decode({3, 5}) == "a ab");
    // BOS/EOS typed as normal pieces (a file that says so) still act as BOS/EOS.
    GgufVocab plain = v;
    plain.types = {2, 1, 1, 1, 1, 1};
    const Tokenizer t2 = Tokenizer::from_serialized(sentencepiece_proto_from_vocab(plain, "plain"), "plain");
    CHECK(t2.bos_id() == 1);
    CHECK(t2.eos_id() == 2);
    CHECK(t2.decode(t2.encode("ab", true)) == "ab");
    // A second piece typed unknown (Phi-3 types its padding so) is one never produced, as in llama.cpp.
    v.types[3] = 2;
    const Tokenizer t3 = Tokenizer::from_serialized(sentencepiece_proto_from_vocab(v, "test vocab"), "test vocab");
    CHECK(t3.encode("ab", false) == std::vector<int>{5});
    CHECK(t3.encode("a", false) == std::vector<int>{0});  // "▁a" is unused now: the unknown piece
    v.types[3] = 1;
    const std::string b = v.tokens[4];
    v.tokens[4] = v.tokens[3];  // a repeated piece
    CHECK_THROWS_AS(sentencepiece_proto_from_vocab(v, "test vocab"), FormatError);
    v.tokens[4] = b;
    v.bos = 6;
    CHECK_THROWS_AS(sentencepiece_proto_from_vocab(v, "test vocab"), FormatError);
}

TEST_CASE("a tokenizer whose vocabulary does not fit the model is refused", "[tokenizer]") {
    const ModelFile m = load_model(model_path("stories260K.bin"));
    const Tokenizer big = Tokenizer::from_file(model_path("llama2-tokenizer.model"));
    CHECK(big.vocab_size() == 32000);
    try {
        check_vocab_match(m, big);
        FAIL("no error");
    } catch (const FormatError& e) {
        const std::string msg = e.what();
        CHECK(msg.find("llama2-tokenizer.model") != std::string::npos);
        CHECK(msg.find("stories260K.bin") != std::string::npos);
    }
    CHECK_NOTHROW(check_vocab_match(m, Tokenizer::from_file(model_path("tok512.model"))));
    CHECK_THROWS_AS(Tokenizer::from_file(model_path("stories260K.bin")), FormatError);
    CHECK_THROWS_AS(Tokenizer::from_serialized("not a proto", "junk"), FormatError);
}
