// Byte-level BPE beyond the oracle strings: decoding gives the text back, special tokens,
// the Qwen2 vocabulary (whose ids are held out), tokenizer.json, and malformed vocabularies.
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>

#include "model/bpe_tokenizer.h"
#include "model/chat_template.h"
#include "model/gguf_vocab.h"
#include "model/hf_tokenizer.h"
#include "model/model_file.h"
#include "model/pretokenizer.h"
#include "model/tokenizer.h"
#include "test_paths.h"
#include "xz_file.h"

using namespace medusa;
using nlohmann::json;

namespace {

EmbeddedVocab vocab_of(const std::string& name) {
    const std::string path = test::ggml_path("tokenizer/ggml-vocab-" + name + ".gguf.xz");
    return load_gguf_vocab(*test::read_xz(path), path);
}

std::vector<std::string> oracle_strings(const std::string& name) {
    std::ifstream f(test::ggml_path("tokenizer/ggml-vocab-" + name + ".gguf.inp"), std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(f)), {}), sep = "\n__ggml_vocab_test__\n";
    std::vector<std::string> out;
    for (size_t at = 0, next; (next = text.find(sep, at)) != std::string::npos; at = next + sep.size())
        out.push_back(text.substr(at, next - at));
    return out;
}

}  // namespace

TEST_CASE("byte-level BPE decodes every test string back to its bytes", "[bpe]") {
    for (const char* name : {"gpt-2", "llama-bpe", "qwen2", "deepseek-llm", "falcon", "mpt", "starcoder", "refact"}) {
        CAPTURE(name);
        const Tokenizer tok = Tokenizer::from_serialized(vocab_of(name), name);
        REQUIRE(tok.byte_level());
        for (const std::string& s : oracle_strings(name)) {
            CAPTURE(s);
            CHECK(tok.decode(tok.encode(s, false)) == s);
        }
    }
}

TEST_CASE("the Qwen2 vocabulary: digits one by one, specials, BOS left out", "[bpe]") {
    const Tokenizer qwen = Tokenizer::from_serialized(vocab_of("qwen2"), "qwen2");
    const Tokenizer llama3 = Tokenizer::from_serialized(vocab_of("llama-bpe"), "llama-bpe");
    CHECK(qwen.encode("12345", false).size() == 5);   // qwen2 splits digits one by one
    CHECK(llama3.encode("12345", false).size() == 2);  // llama-bpe in runs of up to three
    CHECK_FALSE(qwen.adds_bos());
    CHECK(llama3.adds_bos());
    CHECK(llama3.encode("Hi", true).front() == 128000);
    // Control tokens in the text are text unless parse_special; user-defined ones always split.
    const int im_start = qwen.find_piece("<|im_start|>"), think = qwen.find_piece("<think>");
    REQUIRE(im_start >= 0);
    REQUIRE(think >= 0);
    CHECK(qwen.is_control(im_start));
    CHECK_FALSE(qwen.is_control(think));
    CHECK(qwen.encode("<|im_start|>user", false, true) == std::vector<int>{im_start, qwen.find_piece("user")});
    const auto as_text = qwen.encode("<|im_start|>user", false, false);
    CHECK(std::find(as_text.begin(), as_text.end(), im_start) == as_text.end());
    const auto with_think = qwen.encode("a<think>b", false, false);
    CHECK(std::find(with_think.begin(), with_think.end(), think) != with_think.end());
    CHECK(qwen.piece_text(-1, im_start).empty());  // control tokens print nothing
    CHECK(qwen.decode(with_think) == "a<think>b");
    CHECK(qwen.eos_id() == 151645);
}

TEST_CASE("a tokenizer.json of the Llama 3 vocabulary tokenizes as llama.cpp does", "[bpe]") {
    // The GGUF vocabulary written back as Hugging Face would hold it, with tokenizer.json's own
    // (case-insensitive) form of the pre-tokenizer regex.
    const auto gguf = vocab_of("llama-bpe").bpe;
    json vocab = json::object(), added = json::array();
    for (size_t id = 0; id < gguf->tokens.size(); ++id) {
        if (gguf->types[id] == kTokenControl) added.push_back({{"id", id}, {"content", gguf->tokens[id]}, {"special", true}});
        else vocab[gguf->tokens[id]] = id;
    }
    const json t = {
        {"added_tokens", added},
        {"normalizer", nullptr},
        {"pre_tokenizer",
         {{"type", "Sequence"},
          {"pretokenizers",
           {{{"type", "Split"},
             {"pattern", {{"Regex", "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}}},
             {"behavior", "Isolated"},
             {"invert", false}},
            {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}}},
        {"model", {{"type", "BPE"}, {"ignore_merges", true}, {"vocab", vocab}, {"merges", gguf->merges}}}};
    const json config = {{"bos_token", "<|begin_of_text|>"}, {"eos_token", "<|end_of_text|>"}};
    EmbeddedVocab e;
    e.bpe = std::make_shared<BpeVocab>(parse_hf_tokenizer(t.dump(), config.dump(), "", "tokenizer.json"));
    CHECK(e.bpe->tokens == gguf->tokens);
    CHECK(e.bpe->bos == 128000);
    CHECK(e.bpe->eos == 128001);
    const Tokenizer hf = Tokenizer::from_serialized(e, "tokenizer.json");
    const Tokenizer ref = Tokenizer::from_serialized(vocab_of("llama-bpe"), "llama-bpe");
    for (const std::string& s : oracle_strings("llama-bpe")) {
        CAPTURE(s);
        CHECK(hf.encode(s, false) == ref.encode(s, false));
    }
}

TEST_CASE("malformed or unsupported BPE vocabularies are refused with the file named", "[bpe]") {
    auto error_of = [](auto&& f) {
        try {
            f();
        } catch (const FormatError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    auto v = std::make_shared<BpeVocab>();
    v->tokens = {"a", "b", "ab"};
    v->merges = {"a b"};
    v->regexes = {gpt2_regex()};
    CHECK(BpeTokenizer(v, "x").encode("abab", false) == std::vector<int>{2, 2});
    v->merges = {"ab"};
    CHECK_THAT(error_of([&] { BpeTokenizer(v, "x.gguf"); }), Catch::Contains("x.gguf: BPE vocabulary: merge 0"));
    v->merges = {"a b"};
    v->regexes = {"(unclosed"};
    CHECK_THAT(error_of([&] { BpeTokenizer(v, "x.gguf"); }), Catch::Contains("x.gguf: pre-tokenizer regex cannot be compiled"));
    v->regexes = {};
    v->bos = 7;
    CHECK_THAT(error_of([&] { BpeTokenizer(v, "x.gguf"); }), Catch::Contains("special token id 7 is out of range"));
    bool ignore = false;
    CHECK_THAT(error_of([&] { gguf_pre_tokenizer_regexes("martian", ignore, "m.gguf"); }),
               Catch::Contains("m.gguf: pre-tokenizer 'martian' is not supported (") && Catch::Contains("qwen2"));
    const std::string ok_model = R"("model": {"type": "BPE", "vocab": {"a": 0}, "merges": []})";
    CHECK_THAT(error_of([&] { parse_hf_tokenizer("[1]", "", "", "t.json"); }), Catch::Contains("t.json: not a JSON object"));
    CHECK_THAT(error_of([&] { parse_hf_tokenizer(R"({"model": {"type": "Unigram", "vocab": []}})", "", "", "t.json"); }),
               Catch::Contains("model type 'Unigram' is not supported"));
    CHECK_THAT(error_of([&] { parse_hf_tokenizer(R"({"model": {"type": "BPE", "byte_fallback": true, "vocab": {}}})", "", "", "t.json"); }),
               Catch::Contains("tokenizer.model"));
    // Found by fuzz_tokenizer_json: an optional flag of another type escaped as nlohmann's type_error.
    CHECK_THAT(error_of([&] {
                   parse_hf_tokenizer(R"({"added_tokens": [{"id": 1, "content": "<s>", "special": 58}], )" + ok_model + "}",
                                      "", "", "t.json");
               }),
               Catch::StartsWith("t.json: a value of the wrong type (") && Catch::Contains("must be boolean"));
    CHECK_THAT(error_of([&] { parse_hf_tokenizer(R"({"model": {"type": "BPE", "ignore_merges": "yes", "vocab": {"a": 0}}})", "", "", "t.json"); }),
               Catch::StartsWith("t.json: a value of the wrong type ("));
    CHECK_THAT(error_of([&] { parse_hf_tokenizer("{" + ok_model + R"(, "pre_tokenizer": {"type": "Metaspace"}})", "", "", "t.json"); }),
               Catch::Contains("pre_tokenizer 'Metaspace' is not supported"));
    CHECK_THAT(error_of([&] { parse_hf_tokenizer("{" + ok_model + R"(, "normalizer": {"type": "Lowercase"}})", "", "", "t.json"); }),
               Catch::Contains("normalizer 'Lowercase' is not supported"));
    CHECK_THAT(error_of([&] { parse_hf_tokenizer(R"({"model": {"type": "BPE", "vocab": {"a": -3}}})", "", "", "t.json"); }),
               Catch::Contains("token 'a' has an invalid id"));
    // Gaps below config.json's vocab_size become unused padding tokens, as llama.cpp's converter writes them.
    const BpeVocab padded = parse_hf_tokenizer("{" + ok_model + "}", "", R"({"vocab_size": 3})", "t.json");
    CHECK(padded.tokens == std::vector<std::string>{"a", "[PAD1]", "[PAD2]"});
    CHECK(padded.types == std::vector<int32_t>{kTokenNormal, kTokenUnused, kTokenUnused});
}

TEST_CASE("text that is not UTF-8 is read as llama.cpp reads it", "[bpe]") {
    CHECK(sanitize_utf8("plain \xC3\xA9") == "plain \xC3\xA9");
    CHECK(sanitize_utf8("a\xFF" "b") == "a\xEF\xBF\xBD" "b");       // a stray byte
    CHECK(sanitize_utf8("\xC3") == "\xEF\xBF\xBD");                  // a cut sequence
    CHECK(sanitize_utf8("\xE2\x82") == "\xEF\xBF\xBD\xEF\xBF\xBD");  // each byte of it
    const Tokenizer tok = Tokenizer::from_serialized(vocab_of("gpt-2"), "gpt-2");
    CHECK(tok.encode("a\xFF" "b", false) == tok.encode("a\xEF\xBF\xBD" "b", false));
    CHECK(unicode_to_bytes(byte_to_unicode(0x20) + byte_to_unicode(0x00) + byte_to_unicode(0xFF)) == std::string(" \0\xFF", 3));
}

TEST_CASE("chat prompts of byte-level vocabularies: Llama 3 after BOS, ChatML without it", "[bpe]") {
    const Tokenizer llama3 = Tokenizer::from_serialized(vocab_of("llama-bpe"), "llama-bpe");
    const Tokenizer qwen = Tokenizer::from_serialized(vocab_of("qwen2"), "qwen2");
    Conversation c;
    c.user = "Hi!";
    // Each special is one token; the text between them is what the tokenizer makes of it.
    const auto l = encode_chat(render_chat(ChatTemplate::Llama3, c), llama3);
    std::vector<int> want = {128000, llama3.find_piece("<|start_header_id|>")};
    for (int id : llama3.encode("user", false)) want.push_back(id);
    want.push_back(llama3.find_piece("<|end_header_id|>"));
    for (int id : llama3.encode("\n\nHi!", false)) want.push_back(id);
    want.push_back(llama3.find_piece("<|eot_id|>"));
    CHECK(std::vector<int>(l.begin(), l.begin() + long(want.size())) == want);
    CHECK(l == llama3.encode(render_chat(ChatTemplate::Llama3, c).text(), true, true));
    CHECK(llama3.find_piece("<|eom_id|>") < 0);  // Llama 3.0's vocabulary: 3.1 added it
    CHECK(chat_stop_tokens(ChatTemplate::Llama3, llama3) == std::vector<int>{128001, llama3.find_piece("<|eot_id|>")});
    const auto q = encode_chat(render_chat(ChatTemplate::ChatML, c), qwen);
    CHECK(q.front() == qwen.find_piece("<|im_start|>"));  // Qwen2 prompts have no BOS
    CHECK(q == qwen.encode(render_chat(ChatTemplate::ChatML, c).text(), false, true));
    CHECK(chat_stop_tokens(ChatTemplate::ChatML, qwen) == std::vector<int>{151645});  // <|im_end|> is the EOS
}
