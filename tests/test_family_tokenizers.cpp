// The tokenizers of the Gemma 3, Qwen3 and Phi-3 / Phi-4-mini families against llama.cpp: one
// multilingual text set (tests/data/tokenizer/family-text.inp: prose, code, numbers, whitespace,
// a dozen scripts, emoji sequences, combining marks, the families' special-token strings written
// as text) tokenized by llama.cpp with each family's real vocabulary, without BOS/EOS and without
// parsing special-token text. Each vocabulary is loaded once, the way `medusa tokenize -m
// FILE.gguf` loads it (the GGUF's tokenizer.ggml.* keys, read by read_gguf_vocab), and every
// string must give llama.cpp's ids and decode back to itself. tests/data/tokenizer/README.md
// says where the vocabularies come from; scripts/make_family_vocab_fixtures.py made the files.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "model/format_error.h"
#include "model/gguf_metadata.h"
#include "model/gguf_vocab.h"
#include "model/pretokenizer.h"
#include "model/special_tokens.h"
#include "model/tokenizer.h"
#include "temp_dir.h"
#include "test_paths.h"
#include "vocab_test_files.h"
#include "xz_file.h"

using namespace medusa;
using Catch::Contains;

namespace {

const std::string kFixtures = std::string(MEDUSA_SOURCE_DIR) + "/tests/data/tokenizer/";

std::vector<std::string> test_strings(const std::string& set) { return test::vocab_test_strings(kFixtures + set + ".inp"); }

std::vector<std::vector<int>> expected_ids(const std::string& set, const std::string& name) {
    return test::vocab_test_ids(kFixtures + set + "." + name + ".out");
}

Tokenizer load(const std::string& xz_path) {
    return Tokenizer::from_serialized(load_gguf_vocab(*test::read_xz(xz_path), xz_path), xz_path);
}

// Every string against llama.cpp's ids, and back to the text. llama.cpp itself decodes a
// sentencepiece vocabulary's "\u2581" as a space, so strings holding one are not expected back.
// Then the chat-format strings, special-token text parsed, against llama.cpp's ids.
void check_all(const Tokenizer& tok, const std::string& name) {
    const auto strings = test_strings("family-text");
    const auto want = expected_ids("family-text", name);
    REQUIRE(strings.size() == 54);
    REQUIRE(want.size() == strings.size());
    int wrong = 0, not_back = 0;
    for (size_t i = 0; i < strings.size(); ++i) {
        CAPTURE(name, i, strings[i]);
        const std::vector<int> got = tok.encode(strings[i], false, false);
        CHECK(got == want[i]);
        wrong += got != want[i];
        if (!tok.byte_level() && strings[i].find("\xE2\x96\x81") != std::string::npos) continue;
        const std::string back = tok.decode(want[i]);
        CHECK(back == strings[i]);
        not_back += back != strings[i];
    }
    CHECK(wrong == 0);
    CHECK(not_back == 0);
    const auto chats = test_strings("family-chat");
    const auto chat_ids = expected_ids("family-chat", name);
    REQUIRE(chats.size() == 8);
    REQUIRE(chat_ids.size() == chats.size());
    for (size_t i = 0; i < chats.size(); ++i) {
        CAPTURE(name, i, chats[i]);
        CHECK(tok.encode(chats[i], false, true) == chat_ids[i]);
    }
}

// A vocabulary-only GGUF file in memory: a sentencepiece vocabulary of a few pieces and the 256
// byte pieces. add_space_prefix: 0 or 1 writes that boolean, -1 no key, 2 a uint32 instead.
std::vector<uint8_t> tiny_vocab_gguf(const std::string& name, int add_space_prefix) {
    std::vector<std::string> tokens = {"<unk>", "<s>", "</s>", "\xE2\x96\x81", "a", "b", "\xE2\x96\x81" "a",
                                       "\xE2\x96\x81" "b", "ab", "  ", "<u>", "<|im_end|>", "<|endoftext|>"};
    std::vector<float> scores = {0, 0, 0, -4, -5, -6, -1, -2, -3, 0, 0, 0, 0};
    std::vector<int32_t> types = {2, 3, 3, 1, 1, 1, 1, 1, 1, 4, 4, 4, 3};
    char byte[8];
    for (int b = 0; b < 256; ++b) {
        std::snprintf(byte, sizeof byte, "<0x%02X>", b);
        tokens.push_back(byte), scores.push_back(0), types.push_back(6);
    }
    std::vector<uint8_t> out;
    auto raw = [&](const void* p, size_t n) { out.insert(out.end(), (const uint8_t*)p, (const uint8_t*)p + n); };
    auto u32 = [&](uint32_t v) { raw(&v, 4); };
    auto u64 = [&](uint64_t v) { raw(&v, 8); };
    auto str = [&](const std::string& t) { u64(t.size()), raw(t.data(), t.size()); };
    enum : uint32_t { U32 = 4, I32 = 5, F32 = 6, BOOL = 7, STRING = 8, ARRAY = 9 };
    const uint64_t kvs = 9 + (add_space_prefix >= 0 ? 1 : 0);
    u32(0x46554747), u32(3), u64(0), u64(kvs);
    str("general.architecture"), u32(STRING), str("llama");
    str("general.name"), u32(STRING), str(name);
    str("tokenizer.ggml.model"), u32(STRING), str("llama");
    str("tokenizer.ggml.tokens"), u32(ARRAY), u32(STRING), u64(tokens.size());
    for (const std::string& t : tokens) str(t);
    str("tokenizer.ggml.scores"), u32(ARRAY), u32(F32), u64(scores.size()), raw(scores.data(), 4 * scores.size());
    str("tokenizer.ggml.token_type"), u32(ARRAY), u32(I32), u64(types.size()), raw(types.data(), 4 * types.size());
    str("tokenizer.ggml.bos_token_id"), u32(U32), u32(1);
    str("tokenizer.ggml.eos_token_id"), u32(U32), u32(2);
    str("tokenizer.ggml.unknown_token_id"), u32(U32), u32(0);
    if (add_space_prefix == 2) str("tokenizer.ggml.add_space_prefix"), u32(U32), u32(0);
    if (add_space_prefix == 0 || add_space_prefix == 1) {
        str("tokenizer.ggml.add_space_prefix"), u32(BOOL);
        out.push_back(uint8_t(add_space_prefix));
    }
    return out;
}

Tokenizer tiny(const std::string& name, int add_space_prefix) {
    return Tokenizer::from_serialized(load_gguf_vocab(tiny_vocab_gguf(name, add_space_prefix), "tiny.gguf"), "tiny.gguf");
}

using Ids = std::vector<int>;

}  // namespace

TEST_CASE("Gemma 3's vocabulary tokenizes the text set as llama.cpp does", "[family-tokenizers]") {
    const Tokenizer tok = load(kFixtures + "ggml-vocab-gemma-3.gguf.xz");
    CHECK_FALSE(tok.byte_level());
    CHECK(tok.vocab_size() == 262144);
    CHECK(tok.bos_id() == 2);
    // No space is added in front of the text (tokenizer.ggml.add_space_prefix = false).
    CHECK(tok.encode("Hello", false) == std::vector<int>{9259});
    CHECK(tok.decode({9259}) == "Hello");
    // A user-defined run of spaces, stored with spaces as llama.cpp's converter writes it.
    CHECK(tok.piece(138) == "  ");
    check_all(tok, "gemma-3");
}

TEST_CASE("Qwen3's vocabulary tokenizes the text set as llama.cpp does", "[family-tokenizers]") {
    const Tokenizer tok = load(test::ggml_path("tokenizer/ggml-vocab-qwen2.gguf.xz"));
    CHECK(tok.byte_level());
    check_all(tok, "qwen2");
}

TEST_CASE("gpt-4o's vocabulary (Phi-4-mini's pre-tokenizer) tokenizes the text set as llama.cpp does",
          "[family-tokenizers]") {
    const Tokenizer tok = load(kFixtures + "ggml-vocab-gpt-4o.gguf.xz");
    CHECK(tok.byte_level());
    CHECK(tok.vocab_size() == 200064);
    check_all(tok, "gpt-4o");
}

TEST_CASE("Phi-3's vocabulary tokenizes the text set as llama.cpp does", "[family-tokenizers]") {
    const Tokenizer tok = load(test::ggml_path("tokenizer/ggml-vocab-phi-3.gguf.xz"));
    CHECK_FALSE(tok.byte_level());
    check_all(tok, "phi-3");
    // Its padding pieces are typed unknown: never produced from text, but cut out of it when special
    // tokens are parsed, whitespace after them dropped (the file's name is "Phi3"). llama.cpp's ids:
    CHECK(tok.encode("x[PAD32011] y", false, true) == std::vector<int>{921, 32011, 343});
    CHECK(tok.encode("<|user|>\n[PAD32063]\n\n<|end|>", false, true) == std::vector<int>{32010, 32063, 32007});
    CHECK(tok.encode("x[PAD32011] y", false, false) ==
          std::vector<int>{921, 29961, 29925, 3035, 29941, 29906, 29900, 29896, 29896, 29962, 343});
}

// The expected ids below are llama.cpp's for the same vocabulary (written with gguf-py, tokenized
// by scripts/tokenizer_oracle.cpp, with and without --parse-special).
TEST_CASE("a sentencepiece vocabulary is tokenized llama.cpp's way around its user-defined pieces",
          "[family-tokenizers]") {
    SECTION("without a space prefix (Gemma)") {
        const Tokenizer t = tiny("plain", 0);
        CHECK(t.encode("a b", false) == Ids{4, 7});
        CHECK(t.encode("ab<u>b", false) == Ids{8, 10, 5});
        CHECK(t.encode("a  b", false) == Ids{4, 9, 5});  // a user-defined run of spaces
        CHECK(t.decode({4, 9, 5}) == "a  b");
        CHECK(t.decode({4, 7}) == "a b");
        // "<|im_end|>" is user-defined in the file, but llama.cpp makes it control: text unless parsed.
        CHECK(t.encode("a<|im_end|>", false) == Ids{4, 73, 137, 118, 122, 108, 114, 123, 113, 137, 75});
        CHECK(t.encode("a<|im_end|>", false, true) == Ids{4, 11});
        CHECK(t.encode("<u> \tb<|endoftext|> a</s> b", false, true) == Ids{10, 3, 22, 5, 12, 6, 2, 7});
        CHECK(t.piece_text(1, 7) == " b");  // no space prefix: nothing to take off after BOS
    }
    SECTION("with a space prefix, also in front of the text after each special token") {
        for (int key : {1, -1}) {  // true, and the default when the key is absent
            const Tokenizer t = tiny("prefix", key);
            CHECK(t.encode("a b", false) == Ids{6, 7});
            CHECK(t.encode("ab<u>b", false) == Ids{6, 5, 10, 7});
            CHECK(t.encode("a  b", false) == Ids{6, 9, 7});
            CHECK(t.encode("<|im_end|>\n a", false, true) == Ids{11, 3, 23, 6});
            CHECK(t.encode("<u> \tb<|endoftext|> a</s> b", false, true) == Ids{10, 3, 3, 22, 5, 12, 3, 6, 2, 3, 7});
            CHECK(t.decode({6, 7}) == "a b");
            CHECK(t.piece_text(1, 7) == "b");
        }
    }
    SECTION("a model named Phi-3: whitespace after its special tokens is dropped") {
        const Tokenizer t = tiny("Phi3 tiny", 1);
        CHECK(t.encode("<u> \tb<|endoftext|> a</s> b", false) ==
              Ids{10, 7, 73, 137, 114, 123, 113, 124, 115, 129, 114, 133, 129, 137, 75, 6, 73, 60, 128, 75, 7});
        CHECK(t.encode("<|im_end|>\n a", false, true) == Ids{11, 6});
        CHECK(t.encode("<u> \tb<|endoftext|> a</s> b", false, true) == Ids{10, 7, 12, 3, 6, 2, 7});
    }
}

TEST_CASE("tokenizer.ggml.add_space_prefix that is not a boolean is refused naming the file and the key",
          "[family-tokenizers]") {
    try {
        load_gguf_vocab(tiny_vocab_gguf("plain", 2), "tiny.gguf");
        FAIL("loaded");
    } catch (const FormatError& e) {
        CHECK(std::string(e.what()) == "tiny.gguf: metadata key 'tokenizer.ggml.add_space_prefix' is not a boolean");
    }
}

TEST_CASE("llama.cpp's retyping of special tokens by their text", "[family-tokenizers]") {
    const int32_t N = 1, C = 3, U = 4;
    using T = std::vector<int32_t>;
    // End-of-turn and fill-in-the-middle texts become control; other tokens keep their type.
    CHECK(llama_cpp_token_types({"<|im_end|>", "<think>", "<|fim_prefix|>", "hello"}, {U, U, N, N}) == T{C, U, C, N});
    CHECK(llama_cpp_token_types({"<end_of_turn>", "</s>", "<s>"}, {}) == T{C, C, N});  // no types: all normal
    // gpt-oss: its channel tokens are user-defined, and "<|end|>" too next to "<|return|>" and "<|call|>".
    CHECK(llama_cpp_token_types({"<|start|>", "<|channel|>", "<|end|>", "<|return|>", "<|call|>"}, {C, C, C, C, C}) ==
          T{U, U, U, C, C});
    CHECK(llama_cpp_token_types({"<|end|>", "<|call|>"}, {C, C}) == T{C, C});
    // Gemma 4: "</s>" is an ordinary token where "<|tool_response>" exists.
    CHECK(llama_cpp_token_types({"</s>", "<|tool_response>"}, {U, C}) == T{N, C});
    // Phi-3's names strip whitespace after every special token but "<unk>", "<s>", "<|endoftext|>".
    const std::vector<std::string> phi = {"<unk>", "<s>", "</s>", "a", "<|end|>", "<|endoftext|>", "<|user|>"};
    const T types = {2, C, C, N, C, C, U};
    CHECK(llama_cpp_rstrip_tokens("Phi-3-mini-4k-instruct", phi, types) == T{2, 4, 6});
    CHECK(llama_cpp_rstrip_tokens("PHI3", phi, types) == T{2, 4, 6});
    CHECK(llama_cpp_rstrip_tokens("Phi 3.5 Mini Instruct", phi, types).empty());
}

TEST_CASE("the gpt-4o pre-tokenizer is known by the names llama.cpp gives it", "[family-tokenizers]") {
    bool ignore_merges = true;
    const auto gpt4o = gguf_pre_tokenizer_regexes("gpt-4o", ignore_merges, "x");
    CHECK_FALSE(ignore_merges);
    REQUIRE(gpt4o.size() == 1);
    for (const char* name : {"llama4", "kanana2", "talkie", "minimax-m2"}) {
        CAPTURE(name);
        CHECK(gguf_pre_tokenizer_regexes(name, ignore_merges, "x") == gpt4o);
    }
    // Case is told apart in ASCII only, as llama.cpp's rewrite of the regex does; marks split words.
    const PreTokenizer pre(gpt4o, "x");
    CHECK(pre.split("HelloWorld isn't ÉCOLEécole") ==
          std::vector<std::string_view>{"Hello", "World", " isn't", " ÉCOLEécole"});
    // A combining accent is no letter: it starts the next word, as a space or a quote would.
    CHECK(pre.split("x1234567 e\xCC\x81t\xC3\xA9") ==
          std::vector<std::string_view>{"x", "123", "456", "7", " e", "\xCC\x81t\xC3\xA9"});
}

namespace {

// A Hugging Face folder as Gemma's and Phi-3's are published: the sentencepiece model in
// tokenizer.model holds the pieces below `model_pieces`; tokenizer.json (a BPE with byte_fallback)
// and tokenizer_config.json list the special and user-defined tokens as added tokens (a
// user-defined one's spaces written as U+2581), those at and past `model_pieces` only there;
// config.json's vocab_size is `vocab_size`. Made from a GGUF vocabulary of llama.cpp's, so that
// the folder must tokenize as llama.cpp tokenizes that file.
void write_hf_folder(const std::string& gguf_xz, int model_pieces, int vocab_size, const std::vector<int>& rstrip,
                     const std::string& bos, const std::string& eos, const std::filesystem::path& dir) {
    const GgufHeader h = read_gguf_header(*test::read_xz(gguf_xz), gguf_xz);
    GgufVocab v;
    v.tokens = h.meta.array("tokenizer.ggml.tokens", STRING)->texts;
    for (double x : h.meta.array("tokenizer.ggml.scores", F32)->numbers) v.scores.push_back(float(x));
    for (double x : h.meta.array("tokenizer.ggml.token_type", I32)->numbers) v.types.push_back(int32_t(x));
    v.bos = h.meta.integer("tokenizer.ggml.bos_token_id", 1, true);
    v.eos = h.meta.integer("tokenizer.ggml.eos_token_id", 2, true);
    v.unk = h.meta.integer("tokenizer.ggml.unknown_token_id", 0, true);
    v.add_space_prefix = h.meta.boolean("tokenizer.ggml.add_space_prefix", true);
    nlohmann::json added = nlohmann::json::array(), decoder = nlohmann::json::object();
    for (int id = 0; id < int(v.tokens.size()); ++id) {
        const int type = v.types[size_t(id)];
        if (type != 3 && type != 4 && id != v.unk) continue;
        std::string content = v.tokens[size_t(id)];
        if (type == 4)
            for (size_t at; (at = content.find(' ')) != std::string::npos;) content.replace(at, 1, "\xE2\x96\x81");
        const bool strip = std::find(rstrip.begin(), rstrip.end(), id) != rstrip.end();
        const nlohmann::json a = {{"content", content}, {"special", type != 4}, {"rstrip", strip}, {"lstrip", false}};
        decoder[std::to_string(id)] = a;
        nlohmann::json with_id = a;
        with_id["id"] = id;
        added.push_back(with_id);
    }
    GgufVocab model = v;
    model.tokens.resize(size_t(model_pieces)), model.scores.resize(size_t(model_pieces));
    model.types.resize(size_t(model_pieces));
    if (model.eos >= model_pieces) model.eos = 2;  // Phi-3's <|endoftext|> is an added token
    std::ofstream(dir / "tokenizer.model", std::ios::binary) << sentencepiece_proto_from_vocab(model, "tokenizer.model");
    const nlohmann::json tokenizer = {
        {"model", {{"type", "BPE"}, {"byte_fallback", true}, {"vocab", nlohmann::json::object()}}},
        {"added_tokens", added}};
    std::ofstream(dir / "tokenizer.json") << tokenizer.dump();
    std::ofstream(dir / "tokenizer_config.json")
        << nlohmann::json{{"added_tokens_decoder", decoder}, {"bos_token", bos}, {"eos_token", eos}}.dump();
    std::ofstream(dir / "config.json") << nlohmann::json{{"vocab_size", vocab_size}}.dump();
}

}  // namespace

TEST_CASE("a Hugging Face folder of a sentencepiece-style tokenizer.json is read from its tokenizer.model, "
          "as llama.cpp's converter reads it",
          "[family-tokenizers]") {
    const test::TempDir dir("medusa-hf-spm-folder");
    SECTION("Gemma 3: the whole vocabulary in tokenizer.model, padded to a multimodal model's vocab_size") {
        write_hf_folder(kFixtures + "ggml-vocab-gemma-3.gguf.xz", 262144, 262208, {}, "<bos>", "<eos>", dir.path);
        const Tokenizer tok = Tokenizer::from_file(dir.path.string());
        CHECK_FALSE(tok.byte_level());
        CHECK(tok.vocab_size() == 262208);
        CHECK(tok.bos_id() == 2);
        CHECK(tok.piece(138) == "  ");  // U+2581 in a user-defined token's content is a space
        CHECK(tok.piece(262207) == "[PAD262207]");
        check_all(tok, "gemma-3");
    }
    SECTION("Phi-3: 32000 pieces, its chat markers added tokens that drop the whitespace after them") {
        std::vector<int> rstrip = {2};  // "</s>", and the markers after "<|endoftext|>"
        for (int id = 32001; id <= 32010; ++id) rstrip.push_back(id);
        write_hf_folder(test::ggml_path("tokenizer/ggml-vocab-phi-3.gguf.xz"), 32000, 32064, rstrip, "<s>",
                        "<|endoftext|>", dir.path);
        const Tokenizer tok = Tokenizer::from_file(dir.path.string());
        CHECK(tok.vocab_size() == 32064);
        CHECK(tok.bos_id() == 1);
        CHECK(tok.eos_id() == 32000);
        CHECK(tok.find_piece("<|user|>") == 32010);
        check_all(tok, "phi-3");
    }
    SECTION("a tokenizer.model of more pieces than config.json's vocab_size is refused naming both") {
        write_hf_folder(test::ggml_path("tokenizer/ggml-vocab-phi-3.gguf.xz"), 32000, 31999, {}, "<s>", "</s>", dir.path);
        CHECK_THROWS_WITH(Tokenizer::from_file(dir.path.string()),
                          Contains((dir.path / "tokenizer.model").string() + ": has 32000 pieces but") &&
                              Contains("config.json has a vocabulary of 31999"));
    }
}
