// Every order of roles a chat front-end or agent sends (two user messages in a row, a system
// message mid-conversation, the assistant first, a prefill to continue, tool calls and their
// results) rendered as each family's own Jinja template renders it: the expected prompts are
// tests/data/chat_shapes/expected.json, made by scripts/make_chat_shape_fixtures.py with jinja2
// from the templates in tests/data/chat_templates. The formats without a Jinja copy here (Llama 3,
// Llama 2, Vicuna, Zephyr) are checked against their documented layouts written out by hand.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model/chat_template.h"
#include "model/json_file.h"
#include "plain_chat.h"

using namespace medusa;
using nlohmann::json;

namespace {

const std::string kShapes = std::string(MEDUSA_SOURCE_DIR) + "/tests/data/chat_shapes/";

std::vector<ChatMessage> messages_of(const json& list) {
    std::vector<ChatMessage> out;
    for (const json& m : list) {
        ChatMessage msg;
        const std::string role = m["role"];
        msg.role = role == "system" ? ChatRole::System : role == "user" ? ChatRole::User
                 : role == "assistant" ? ChatRole::Assistant : ChatRole::Tool;
        msg.content = m["content"].is_null() ? "" : m["content"].get<std::string>();
        if (m.contains("tool_calls"))
            for (const json& c : m["tool_calls"])
                msg.tool_calls.push_back({c["id"], c["function"]["name"], c["function"]["arguments"]});
        out.push_back(std::move(msg));
    }
    return out;
}

std::vector<ChatMessage> shape(const std::string& name) {
    for (const json& c : read_json_file(kShapes + "conversations.json"))
        if (c["name"] == name) return messages_of(c["messages"]);
    FAIL("no conversation named " << name);
    return {};
}

}  // namespace

TEST_CASE("every order of roles renders as the family's own template renders it", "[chat-shapes]") {
    const json conversations = read_json_file(kShapes + "conversations.json");
    const json expected = read_json_file(kShapes + "expected.json");
    REQUIRE(conversations.size() >= 14);
    for (const json& c : conversations) {
        const std::vector<ChatMessage> ms = messages_of(c["messages"]);
        const json& rendered = expected.at(c["name"].get<std::string>());
        const auto tools = rendered.value("_tools", std::vector<std::string>{});  // each as json.dumps wrote it
        for (const auto& [family, text] : rendered.items()) {
            if (family == "_tools" || text.is_null()) continue;  // null: Qwen2.5's own default system message
            INFO(c["name"].get<std::string>() << " through " << family);
            const ChatTemplate t = *parse_chat_template(family);
            CHECK(render_messages(t, ms, true, tools).text() == text.get<std::string>());
        }
    }
}

TEST_CASE("a prefill is continued: the prompt ends with its text, with no end of turn or new turn", "[chat-shapes]") {
    const auto ms = shape("a prefill");
    for (const ChatTemplate t : {ChatTemplate::VicunaV11, ChatTemplate::Llama2Chat, ChatTemplate::Zephyr, ChatTemplate::ChatML,
                                 ChatTemplate::Llama3, ChatTemplate::Qwen3, ChatTemplate::Gemma, ChatTemplate::Phi3,
                                 ChatTemplate::Phi4}) {
        INFO(chat_template_name(t));
        const ChatPrompt p = render_messages(t, ms);
        CHECK_THAT(p.text(), Catch::EndsWith("Autumn moonlight,"));
        CHECK(!p.parts.back().special);
        // The same conversation with the reply asked for is the prefill's prompt less its text.
        const ChatPrompt asked = render_messages(t, {ms.begin(), ms.end() - 1});
        CHECK(p.text().size() > asked.text().size());
    }
}

TEST_CASE("Llama 3, Llama 2, Vicuna and Zephyr write every order of roles in their own layouts", "[chat-shapes]") {
    const auto tools = shape("tool calls and their results");
    CHECK(render_messages(ChatTemplate::Llama3, tools).text() ==
          "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
          "<|start_header_id|>user<|end_header_id|>\n\nWeather and time in Oslo?<|eot_id|>"
          "<|start_header_id|>assistant<|end_header_id|>\n\n"
          "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}\n"
          "{\"name\": \"get_time\", \"parameters\": {\"city\": \"Oslo\", \"tz\": \"CET\"}}<|eot_id|>"
          "<|start_header_id|>ipython<|end_header_id|>\n\n-3 C, snow<|eot_id|>"
          "<|start_header_id|>ipython<|end_header_id|>\n\n14:05<|eot_id|>"
          "<|start_header_id|>assistant<|end_header_id|>\n\n");
    CHECK(render_messages(ChatTemplate::Llama3, shape("a prefill ending in a space")).text() ==
          "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
          "<|start_header_id|>user<|end_header_id|>\n\nWrite a haiku.<|eot_id|>"
          "<|start_header_id|>assistant<|end_header_id|>\n\nAutumn");
    // Llama 2: the system block in the first user turn, a mid-conversation system message read as the user's.
    CHECK(render_messages(ChatTemplate::Llama2Chat, shape("a system message mid-conversation")).text() ==
          "[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHello! [/INST] Hi there. </s><s>[INST] Answer in French.\n\nWhat is 2+2? [/INST]");
    CHECK(render_messages(ChatTemplate::Llama2Chat, shape("the assistant speaks first")).text() ==
          "[INST] <<SYS>>\nBe brief.\n<</SYS>> [/INST] How can I help? </s><s>[INST] What is 2+2? [/INST]");
    CHECK(render_messages(ChatTemplate::Llama2Chat, shape("a prefill")).text() ==
          "[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nWrite a haiku. [/INST] Autumn moonlight,");
    // Vicuna: turns joined, a tool's result a user message.
    CHECK(render_messages(ChatTemplate::VicunaV11, shape("two assistant messages in a row")).text() ==
          "Be brief. USER: Hello! ASSISTANT: Hi.\n\nHow are you?</s>USER: Fine. ASSISTANT:");
    CHECK(render_messages(ChatTemplate::VicunaV11, shape("a conversation of one prefill")).text() ==
          "Be brief. USER:  ASSISTANT: Once upon a time");
    CHECK(render_messages(ChatTemplate::Zephyr, shape("a tool call after text, its result, the answer and a new question"))
              .text() ==
          "<|system|>\nBe brief.</s>\n<|user|>\nWeather in Oslo?</s>\n<|assistant|>\nLet me check.\n<tool_call>\n"
          "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call></s>\n"
          "<|user|>\n<tool_response>\n-3 C\n</tool_response></s>\n<|assistant|>\nIt is -3 C.</s>\n<|user|>\nThanks!</s>\n"
          "<|assistant|>\n");
}

TEST_CASE("the plain lines of --chat-template none write every order of roles", "[chat-shapes]") {
    CHECK(cli::plain_chat_text(shape("a system message mid-conversation")) ==
          "Be brief.\n\nUser: Hello!\nAssistant: Hi there.\nSystem: Answer in French.\nUser: What is 2+2?\nAssistant:");
    CHECK(cli::plain_chat_text(shape("a prefill")) == "Be brief.\n\nUser: Write a haiku.\nAssistant: Autumn moonlight,");
    CHECK(cli::plain_chat_text(shape("tool calls and their results")).find(
              "Assistant: <tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>\n<tool_call>") !=
          std::string::npos);
    CHECK_THAT(cli::plain_chat_text(shape("tool calls and their results")), Catch::EndsWith("Tool: -3 C, snow\nTool: 14:05\nAssistant:"));
}
