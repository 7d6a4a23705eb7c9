// libFuzzer target: chat-template detection from arbitrary bytes, read as a tokenizer_config.json,
// as a config.json (its _name_or_path), and as a Jinja template. Each either names a family or
// none, or refuses the JSON with a FormatError; a family found renders a prompt holding the
// user's message. The same bytes, streamed through the stop-string filter in small pieces, must
// come back as they went in, up to the first stop string.
#include <cstdint>
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "model/chat_template.h"
#include "model/model_file.h"

namespace {

using medusa::fuzz::check;

void check_family(medusa::ChatTemplate t, const std::string& text) {
    check(medusa::parse_chat_template(medusa::chat_template_name(t)) == t);
    if (t == medusa::ChatTemplate::None) return;
    medusa::Conversation conv;
    conv.system = "Be brief.";
    conv.history = {{"Hi", "Hello."}};
    conv.user = text.substr(0, 64);
    const std::string prompt = medusa::render_chat(t, conv).text();
    check(prompt.find("Hello.") != std::string::npos && !medusa::chat_stop_strings(t).empty());
}

// The bytes as an earlier reply: Qwen3 renders a suffix of them (what follows the last "</think>"),
// Gemma a part of them with the whitespace trimmed off both ends.
void check_reply_rendering(const std::string& all) {
    medusa::Conversation conv;
    conv.history = {{"Hi", all.substr(0, 256)}};
    conv.user = "Go";
    const std::string& reply = conv.history[0].assistant;
    const medusa::ChatPrompt q = medusa::render_chat(medusa::ChatTemplate::Qwen3, conv);
    check(q.parts.size() > 6 && q.parts[5].text.rfind("assistant\n", 0) == 0);
    const std::string kept = q.parts[5].text.substr(10);
    check(reply.size() >= kept.size() && reply.compare(reply.size() - kept.size(), kept.size(), kept) == 0);
    const medusa::ChatPrompt g = medusa::render_chat(medusa::ChatTemplate::Gemma, conv);
    check(g.parts.size() > 6 && g.parts[5].text.rfind("model\n", 0) == 0);
    const std::string trimmed = g.parts[5].text.substr(6);
    const auto ws = [](char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; };
    check(reply.find(trimmed) != std::string::npos);
    check(trimmed.empty() || (!ws(trimmed.front()) && !ws(trimmed.back())));
}

// One filter holding every family's stop strings, fed the text's first 512 bytes (enough for any
// stop string) in pieces of 1 to 8 bytes.
void check_stop_filter(const std::string& all) {
    const std::string text = all.substr(0, 512);
    const size_t step = all.size() % 8 + 1;
    std::vector<std::string> stops;
    for (auto t : {medusa::ChatTemplate::VicunaV11, medusa::ChatTemplate::Llama2Chat, medusa::ChatTemplate::Zephyr,
                   medusa::ChatTemplate::ChatML, medusa::ChatTemplate::Llama3, medusa::ChatTemplate::Qwen3,
                   medusa::ChatTemplate::Gemma, medusa::ChatTemplate::Phi3, medusa::ChatTemplate::Phi4})
        for (const std::string& s : medusa::chat_stop_strings(t)) stops.push_back(s);
    medusa::StopStringFilter f(stops);
    std::string shown;
    for (size_t i = 0; i < text.size(); i += step) shown += f.feed(text.substr(i, step));
    shown += f.flush();
    check(shown == f.reply() && text.compare(0, shown.size(), shown) == 0);
    size_t first = std::string::npos;
    for (const auto& s : stops) first = std::min(first, text.find(s));
    check(f.stopped() == (first != std::string::npos) && shown.size() == std::min(first, text.size()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    for (auto detect : {medusa::detect_chat_template_tokenizer_config, medusa::detect_chat_template_config}) {
        try {
            if (const std::optional<medusa::ChatTemplateDetection> d = detect(text, "fuzz.json")) {
                check(!d->reason.empty());
                check_family(d->kind, text);
            }
        } catch (const medusa::FormatError&) {
        }
    }
    check_family(medusa::detect_chat_template_jinja(text), text);
    if (const auto t = medusa::parse_chat_template(text)) check_family(*t, text);
    check_reply_rendering(text);
    check_stop_filter(text);
    return 0;
}
