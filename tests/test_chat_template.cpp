// Chat templates: each family's prompt against its published format, detection from the families'
// Jinja templates, and a GGUF file written here carrying tokenizer.chat_template.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "model/chat_template.h"
#include "model/load_model.h"
#include "model/model_file.h"
#include "model/tokenizer.h"
#include "cli_runner.h"
#include "test_paths.h"
#include "tiny_gguf.h"

using namespace medusa;
using medusa::test::model_path;
using medusa::test::write_tiny_gguf;
namespace fs = std::filesystem;

namespace {

Conversation two_turns(std::string system) {
    Conversation c;
    c.system = std::move(system);
    c.history = {{"Hello!", "Hi there."}};
    c.user = "How are you?";
    return c;
}

size_t count_special(const ChatPrompt& p, const std::string& piece) {
    return size_t(std::count_if(p.parts.begin(), p.parts.end(),
                                [&](const ChatPart& x) { return x.special && x.text == piece; }));
}

}  // namespace

// Expected strings, written out by hand from each family's published format:
//  Vicuna v1.1: FastChat fastchat/conversation.py, "vicuna_v1.1" (ADD_COLON_TWO, sep " ", sep2 "</s>");
//    docs/weights_version.md: "the separator has been changed from ### to the EOS token </s>".
//  Llama-2 chat: huggingface.co/blog/llama2 "How to prompt Llama 2":
//    <s>[INST] <<SYS>>\n{{ system_prompt }}\n<</SYS>>\n\n{{ user_msg_1 }} [/INST] {{ model_answer_1 }} </s><s>[INST] {{ user_msg_2 }} [/INST]
//    (Meta's llama/generation.py builds the same tokens: "[INST] u [/INST] a " with bos and eos).
//  Zephyr: HuggingFaceH4/zephyr-7b-beta model card output of apply_chat_template:
//    <|system|>\n...</s>\n<|user|>\n...</s>\n<|assistant|>\n
//  ChatML: openai-python chatml.md and the ChatML chat_template: <|im_start|>role\ncontent<|im_end|>\n
//  Llama 3: Meta-Llama-3-8B-Instruct's chat_template: bos_token, then per message
//    '<|start_header_id|>' + role + '<|end_header_id|>\n\n' + content | trim + '<|eot_id|>', and the
//    generation prompt '<|start_header_id|>assistant<|end_header_id|>\n\n'.
TEST_CASE("each family renders a conversation in its published format", "[chat-template]") {
    const Conversation c = two_turns("Be brief.");
    SECTION("vicuna v1.1") {
        const ChatPrompt p = render_chat(ChatTemplate::VicunaV11, c);
        CHECK(p.text() == "Be brief. USER: Hello! ASSISTANT: Hi there.</s>USER: How are you? ASSISTANT:");
        CHECK(count_special(p, "</s>") == 1);  // the separator is the EOS token, not the five characters
    }
    SECTION("llama-2 chat") {
        const ChatPrompt p = render_chat(ChatTemplate::Llama2Chat, c);
        CHECK("<s>" + p.text() ==
              "<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHello! [/INST] Hi there. </s><s>[INST] How are you? [/INST]");
        CHECK(count_special(p, "<s>") == 1);  // the second turn's; the first is the tokenizer's
        CHECK(count_special(p, "</s>") == 1);
    }
    SECTION("zephyr") {
        const ChatPrompt p = render_chat(ChatTemplate::Zephyr, c);
        CHECK(p.text() ==
              "<|system|>\nBe brief.</s>\n<|user|>\nHello!</s>\n<|assistant|>\nHi there.</s>\n<|user|>\nHow are "
              "you?</s>\n<|assistant|>\n");
        CHECK(count_special(p, "</s>") == 4);
        CHECK(count_special(p, "<|user|>") == 0);  // plain text in Zephyr/TinyLlama vocabularies
    }
    SECTION("chatml") {
        const ChatPrompt p = render_chat(ChatTemplate::ChatML, c);
        CHECK(p.text() ==
              "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\nHi "
              "there.<|im_end|>\n<|im_start|>user\nHow are you?<|im_end|>\n<|im_start|>assistant\n");
        CHECK(count_special(p, "<|im_start|>") == 5);
        CHECK(count_special(p, "<|im_end|>") == 4);
    }
    SECTION("llama 3") {
        const ChatPrompt p = render_chat(ChatTemplate::Llama3, c);
        CHECK(p.text() ==
              "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|><|start_header_id|>user<|end_header_id|>"
              "\n\nHello!<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHi there.<|eot_id|><|start_header_id|>"
              "user<|end_header_id|>\n\nHow are you?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
        CHECK(count_special(p, "<|start_header_id|>") == 5);
        CHECK(count_special(p, "<|eot_id|>") == 4);
    }
}

TEST_CASE("a first message without a system prompt", "[chat-template]") {
    Conversation c;
    c.user = "What is 2+2?";
    CHECK(render_chat(ChatTemplate::VicunaV11, c).text() == "USER: What is 2+2? ASSISTANT:");
    CHECK(render_chat(ChatTemplate::Llama2Chat, c).text() == "[INST] What is 2+2? [/INST]");
    CHECK(render_chat(ChatTemplate::Zephyr, c).text() == "<|user|>\nWhat is 2+2?</s>\n<|assistant|>\n");
    CHECK(render_chat(ChatTemplate::ChatML, c).text() ==
          "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n");
    // FastChat's default Vicuna system message.
    c.system = default_system_prompt(ChatTemplate::VicunaV11);
    CHECK(render_chat(ChatTemplate::VicunaV11, c).text() ==
          "A chat between a curious user and an artificial intelligence assistant. The assistant gives helpful, "
          "detailed, and polite answers to the user's questions. USER: What is 2+2? ASSISTANT:");
    CHECK(default_system_prompt(ChatTemplate::ChatML).empty());
    CHECK_THROWS_AS(render_chat(ChatTemplate::None, c), std::invalid_argument);
}

TEST_CASE("llama-2 strips messages as Meta's chat_completion does", "[chat-template]") {
    Conversation c;
    c.history = {{"  Hi \n", " Hello.  "}};
    c.user = "\tBye ";
    CHECK(render_chat(ChatTemplate::Llama2Chat, c).text() == "[INST] Hi [/INST] Hello. </s><s>[INST] Bye [/INST]");
}

TEST_CASE("template names parse both ways", "[chat-template]") {
    for (ChatTemplate t : {ChatTemplate::None, ChatTemplate::VicunaV11, ChatTemplate::Llama2Chat, ChatTemplate::Zephyr,
                           ChatTemplate::ChatML, ChatTemplate::Llama3, ChatTemplate::Qwen3, ChatTemplate::Gemma,
                           ChatTemplate::Phi3, ChatTemplate::Phi4}) {
        CHECK(parse_chat_template(chat_template_name(t)) == t);
        CHECK_THAT(chat_template_names("|"), Catch::Contains(chat_template_name(t)));
    }
    CHECK(chat_template_names("|") == "vicuna_v1.1|llama2_chat|zephyr|chatml|llama3|qwen3|gemma|phi3|phi4|none");
    CHECK(parse_chat_template("Gemma-3") == ChatTemplate::Gemma);
    CHECK(parse_chat_template("phi-3.5") == ChatTemplate::Phi3);
    CHECK(parse_chat_template("phi-4-mini") == ChatTemplate::Phi4);
    CHECK(parse_chat_template("qwen") == ChatTemplate::ChatML);  // Qwen2's, as before
    CHECK(parse_chat_template("Vicuna") == ChatTemplate::VicunaV11);
    CHECK(parse_chat_template("llama-2") == ChatTemplate::Llama2Chat);
    CHECK_FALSE(parse_chat_template("alpaca").has_value());
}

// Short excerpts of the families' Jinja chat templates as they appear in tokenizer_config.json
// files and GGUF tokenizer.chat_template keys.
TEST_CASE("families are recognised from their Jinja chat templates", "[chat-template]") {
    // meta-llama/Llama-2-7b-chat-hf tokenizer_config.json (excerpt).
    const std::string llama2 =
        "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = "
        "messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif "
        "%}{% for message in loop_messages %}{% if loop.index0 == 0 and system_message != false %}{% set content = "
        "'<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}{% else %}{% set content = "
        "message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + "
        "content.strip() + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + "
        "eos_token }}{% endif %}{% endfor %}";
    // HuggingFaceH4/zephyr-7b-beta and TinyLlama/TinyLlama-1.1B-Chat-v1.0 tokenizer_config.json.
    const std::string zephyr =
        "{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\n' + message['content'] + "
        "eos_token }}\n{% elif message['role'] == 'system' %}\n{{ '<|system|>\n' + message['content'] + eos_token "
        "}}\n{% elif message['role'] == 'assistant' %}\n{{ '<|assistant|>\n'  + message['content'] + eos_token "
        "}}\n{% endif %}\n{% if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor "
        "%}";
    // The usual ChatML template (e.g. teknium/OpenHermes-2.5-Mistral-7B).
    const std::string chatml =
        "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
        "'<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";
    // A Vicuna v1.1 template in the style GGUF conversions carry (FastChat's format in Jinja).
    const std::string vicuna =
        "{% if messages[0]['role'] == 'system' %}{% set system_message = messages[0]['content'] + ' ' %}{% set "
        "loop_messages = messages[1:] %}{% else %}{% set system_message = '' %}{% set loop_messages = messages %}{% "
        "endif %}{{ system_message }}{% for message in loop_messages %}{% if message['role'] == 'user' %}{{ 'USER: ' "
        "+ message['content'] + ' ' }}{% elif message['role'] == 'assistant' %}{{ 'ASSISTANT: ' + "
        "message['content'] + eos_token }}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ 'ASSISTANT:' }}{% "
        "endif %}";
    CHECK(detect_chat_template_jinja(llama2) == ChatTemplate::Llama2Chat);
    CHECK(detect_chat_template_jinja(zephyr) == ChatTemplate::Zephyr);
    CHECK(detect_chat_template_jinja(chatml) == ChatTemplate::ChatML);
    CHECK(detect_chat_template_jinja(vicuna) == ChatTemplate::VicunaV11);

    // Look-alikes of other families are not taken for these.
    // microsoft/Phi-3-mini: <|user|> ... <|end|> is Phi-3's, not Zephyr's.
    CHECK(detect_chat_template_jinja("{% for message in messages %}{% if message['role'] == 'user' %}{{'<|user|>' + "
                                     "'\n' + message['content'] + '<|end|>' + '\n' + '<|assistant|>' + '\n'}}{% "
                                     "endif %}{% endfor %}") == ChatTemplate::Phi3);
    // mistralai/Mistral-7B-Instruct-v0.1: [INST] without <<SYS>>.
    CHECK(detect_chat_template_jinja("{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' "
                                     "%}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% endif %}{% endfor %}") ==
          ChatTemplate::None);
    // Meta-Llama-3-8B-Instruct's headers.
    CHECK(detect_chat_template_jinja("{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + "
                                     "message['content'] | trim + '<|eot_id|>' }}") == ChatTemplate::Llama3);
    CHECK(detect_chat_template_jinja("") == ChatTemplate::None);
}

TEST_CASE("stop strings end a streamed reply, across token boundaries", "[chat-template]") {
    StopStringFilter f(chat_stop_strings(ChatTemplate::VicunaV11));
    std::string shown;
    for (const char* piece : {"Fine", ", thanks", ". U", "SE", "R: and you"}) shown += f.feed(piece);
    CHECK(f.stopped());
    CHECK(shown == "Fine, thanks. ");
    CHECK(f.reply() == "Fine, thanks. ");
    CHECK(f.feed("more") == "");
    // Held back while it could begin a stop string, released when it does not.
    StopStringFilter g(chat_stop_strings(ChatTemplate::ChatML));
    CHECK(g.feed("a <|im") == "a ");
    CHECK(g.feed("age|>") == "<|image|>");
    CHECK(g.feed(" <") == " ");
    CHECK(g.flush() == "<");
    CHECK_FALSE(g.stopped());
    CHECK(g.reply() == "a <|image|> <");
}

// The Llama-2 tokenizer (32000 pieces) turns a rendered prompt into the tokens Meta's
// chat_completion builds: per answered turn bos + encode("[INST] u [/INST] a ") + eos, then
// bos + encode("[INST] u [/INST]").
TEST_CASE("encode_chat gives Llama-2 chat the tokens of Meta's reference code", "[chat-template]") {
    const Tokenizer tok = Tokenizer::from_file(model_path("llama2-tokenizer.model"));
    REQUIRE(tok.vocab_size() == 32000);
    const std::vector<int> ids = encode_chat(render_chat(ChatTemplate::Llama2Chat, two_turns("Be brief.")), tok);
    std::vector<int> expected = tok.encode("[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHello! [/INST] Hi there. ", true);
    expected.push_back(tok.eos_id());
    const std::vector<int> second = tok.encode("[INST] How are you? [/INST]", true);
    expected.insert(expected.end(), second.begin(), second.end());
    CHECK(ids == expected);

    // Vicuna's "</s>" separator is the EOS id, once, and no piece spells it out.
    const std::vector<int> v = encode_chat(render_chat(ChatTemplate::VicunaV11, two_turns("Be brief.")), tok);
    CHECK(v.front() == tok.bos_id());
    CHECK(std::count(v.begin(), v.end(), tok.eos_id()) == 1);
    CHECK(std::count(v.begin(), v.end(), tok.bos_id()) == 1);
    CHECK(tok.decode(v).find("</s>") == std::string::npos);
    CHECK(chat_stop_tokens(ChatTemplate::VicunaV11, tok) == std::vector<int>{tok.eos_id()});
    // The Llama-2 vocabulary has no <|im_start|> piece: ChatML falls back to text there.
    const std::vector<int> m = encode_chat(render_chat(ChatTemplate::ChatML, two_turns("")), tok);
    CHECK(tok.decode(m).find("<|im_start|>user") != std::string::npos);
    CHECK(chat_stop_tokens(ChatTemplate::ChatML, tok) == std::vector<int>{tok.eos_id()});
}


TEST_CASE("a GGUF's tokenizer.chat_template survives loading and selects the template", "[chat-template]") {
    const std::string chatml = medusa::test::kChatmlTemplate;
    const fs::path p = write_tiny_gguf("chatml", &chatml);
    const ModelFile m = load_model(p.string());
    fs::remove(p);
    CHECK(m.format == ModelFormat::Gguf);
    CHECK(m.chat_template == chatml);
    const ChatTemplateDetection d = detect_chat_template(m);
    CHECK(d.kind == ChatTemplate::ChatML);
    CHECK_THAT(d.reason, Catch::Contains("tokenizer.chat_template"));

    // The embedded vocabulary has <|im_start|> = 3 and <|im_end|> = 4 as control pieces: the
    // prompt uses those ids (sentencepiece alone would spell control pieces out byte by byte).
    const Tokenizer tok = Tokenizer::from_serialized(m.embedded_tokenizer, m.path);
    Conversation c;
    c.user = "Hi";
    const std::vector<int> ids = encode_chat(render_chat(d.kind, c), tok);
    REQUIRE(ids.size() > 3);
    CHECK(ids[0] == tok.bos_id());
    CHECK(ids[1] == 3);
    CHECK(std::count(ids.begin(), ids.end(), 3) == 2);
    CHECK(std::count(ids.begin(), ids.end(), 4) == 1);
    CHECK(tok.encode("<|im_start|>", false) != std::vector<int>{3});
    CHECK(chat_stop_tokens(ChatTemplate::ChatML, tok) == std::vector<int>{tok.eos_id(), 4});

    const std::string llama2 = "{{ bos_token + '[INST] ' + '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' }}";
    const fs::path q = write_tiny_gguf("llama2", &llama2);
    const ModelFile ml = load_model(q.string());
    fs::remove(q);
    CHECK(detect_chat_template(ml).kind == ChatTemplate::Llama2Chat);

    const fs::path r = write_tiny_gguf("none", nullptr);
    const ModelFile mn = load_model(r.string());
    fs::remove(r);
    CHECK(mn.chat_template.empty());
    CHECK(detect_chat_template(mn).kind == ChatTemplate::None);
}

TEST_CASE("the shared story models have no chat template", "[chat-template]") {
    const ModelFile g = load_model(model_path("gguf/stories260K-f32.gguf"));
    CHECK(g.chat_template.empty());
    const ChatTemplateDetection dg = detect_chat_template(g);
    CHECK(dg.kind == ChatTemplate::None);
    CHECK_THAT(dg.reason, Catch::Contains("without tokenizer.chat_template"));
    const ChatTemplateDetection db = detect_chat_template(load_model(model_path("stories260K.bin")));
    CHECK(db.kind == ChatTemplate::None);
    CHECK_THAT(db.reason, Catch::Contains("story model"));
}

TEST_CASE("a Hugging Face folder is recognised by its tokenizer_config.json or model name", "[chat-template]") {
    const fs::path dir = fs::temp_directory_path() / ("medusa-hf-chat-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    ModelFile m;
    m.format = ModelFormat::Safetensors;
    m.path = (dir / "model.safetensors").string();
    std::ofstream(dir / "config.json") << R"({"_name_or_path": "lmsys/vicuna-7b-v1.5", "architectures": ["LlamaForCausalLM"]})";
    CHECK(detect_chat_template(m).kind == ChatTemplate::VicunaV11);
    // tokenizer_config.json's chat_template wins over the name.
    std::ofstream(dir / "tokenizer_config.json")
        << R"({"add_bos_token": true, "chat_template": "{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\n' + message['content'] + eos_token }}\n{% endif %}{% if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}"})";
    m.path = dir.string();
    const ChatTemplateDetection d = detect_chat_template(m);
    CHECK(d.kind == ChatTemplate::Zephyr);
    CHECK_THAT(d.reason, Catch::Contains("tokenizer_config.json"));
    std::ofstream(dir / "tokenizer_config.json") << R"({"add_bos_token": true})";
    std::ofstream(dir / "config.json") << R"({"_name_or_path": "meta-llama/Llama-2-7b-chat-hf"})";
    CHECK(detect_chat_template(m).kind == ChatTemplate::Llama2Chat);
    std::ofstream(dir / "config.json") << R"({"_name_or_path": "meta-llama/Llama-2-7b-hf"})";
    CHECK(detect_chat_template(m).kind == ChatTemplate::None);  // the base model is not a chat model
    fs::remove_all(dir);
}

TEST_CASE("tokenizer_config.json and config.json of the wrong shape are refused naming the file", "[chat-template]") {
    CHECK(detect_chat_template_tokenizer_config(R"({"add_bos_token": true})", "t.json") == std::nullopt);
    const auto named = detect_chat_template_tokenizer_config(
        R"({"chat_template": [{"name": "tool_use", "template": "<|im_start|>"}, {"name": "default", "template": "[INST] <<SYS>>"}]})",
        "t.json");
    REQUIRE(named);
    CHECK(named->kind == ChatTemplate::Llama2Chat);
    for (const char* bad : {R"({"chat_template": 42})", R"({"chat_template": [1]})",
                            R"({"chat_template": [{"name": 2, "template": "x"}]})", R"(["<|im_start|>"])", R"({"chat)"})
        CHECK_THROWS_WITH(detect_chat_template_tokenizer_config(bad, "dir/tokenizer_config.json"),
                          Catch::StartsWith("dir/tokenizer_config.json: "));
    CHECK_THROWS_WITH(detect_chat_template_config(R"({"_name_or_path": ["lmsys/vicuna-7b"]})", "dir/config.json"),
                      Catch::Contains("dir/config.json: '_name_or_path' is not a string"));
    // In a folder, such a file leaves the model without a chat format and says why.
    const fs::path dir = fs::temp_directory_path() / ("medusa-hf-chat-bad-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "tokenizer_config.json") << R"({"chat_template": 42})";
    ModelFile m;
    m.format = ModelFormat::Safetensors;
    m.path = dir.string();
    const ChatTemplateDetection d = detect_chat_template(m);
    CHECK(d.kind == ChatTemplate::None);
    CHECK_THAT(d.reason, Catch::Contains("tokenizer_config.json: chat_template is neither a string"));
    fs::remove_all(dir);
}

TEST_CASE("medusa generate --chat: story models continue the prompt, --chat-template forces a format",
          "[chat-template][cli]") {
    using medusa::test::run_medusa;
    const std::string base = "generate -m " + model_path("stories260K.bin") + " --tokenizer " +
                             model_path("tok512.model") + " -p 'Once upon a time' -n 12 --temp 0 --cpu";
    const auto plain = run_medusa(base);
    REQUIRE(plain.exit_code == 0);
    const auto chat = run_medusa(base + " --chat");
    REQUIRE(chat.exit_code == 0);
    CHECK_THAT(chat.err, Catch::Contains("no chat template") && Catch::Contains("story model"));
    CHECK(chat.out == plain.out);  // the same continuation as without --chat

    const auto forced = run_medusa(base + " --chat-template chatml --system 'Tell stories.'");
    REQUIRE(forced.exit_code == 0);
    CHECK_THAT(forced.err, Catch::Contains("chat template: chatml"));
    CHECK_THAT(forced.out, Catch::StartsWith("<|im_start|>system\nTell stories.<|im_end|>\n<|im_start|>user\nOnce "
                                             "upon a time<|im_end|>\n<|im_start|>assistant\n"));
    CHECK(forced.out != plain.out);

    const auto bad = run_medusa(base + " --chat-template alpaca");
    CHECK(bad.exit_code != 0);
    CHECK_THAT(bad.err, Catch::Contains("unknown --chat-template 'alpaca'"));
    const auto sys = run_medusa(base + " --system hi");
    CHECK(sys.exit_code != 0);
    CHECK_THAT(sys.err, Catch::Contains("--system needs --chat"));
}
